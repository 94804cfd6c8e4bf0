// The environment every test file starts from; a test that needs another value sets its own.
process.env.API_KEY_SECRET ??= 'test-secret-for-hashing-api-keys-0123456789';
process.env.NODE_ENV ??= 'test';
// Quiet by default; a test that reads the logs sets its own level (see logging.e2e-spec.ts).
process.env.LOG_LEVEL ??= 'silent';
