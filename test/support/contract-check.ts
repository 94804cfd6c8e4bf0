import { takeContractViolations } from './contract-violations';

// Every response a test receives must match the published OpenAPI document: the test apps record
// each mismatch (support/openapi-contract.ts) and the test that received it fails here.
afterEach(() => {
  const violations = takeContractViolations();
  if (violations.length > 0) {
    throw new Error(`Responses that break the OpenAPI document:\n- ${violations.join('\n- ')}`);
  }
});
