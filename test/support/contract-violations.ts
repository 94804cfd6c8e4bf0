// Kept apart from openapi-contract.ts so that the per-test check (contract-check.ts, run for every
// spec file, unit specs included) does not load the validator.
const violations: string[] = [];

export function recordContractViolation(violation: string): void {
  violations.push(violation);
}

/** The violations recorded since the last call; they are forgotten. */
export function takeContractViolations(): string[] {
  return violations.splice(0);
}
