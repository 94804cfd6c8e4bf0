/*
 * Three tiers, one `npm test` for all of them, each a folder (test/repo/test-tree.spec.ts checks
 * that every spec of the repository is in exactly one):
 * - unit: specs beside the code (src/**), the TypeScript client's own (clients/typescript/test/)
 *   and the checks of the repository as a whole (test/repo/), with no database, no build, no setup:
 *   `npm run test:unit`, in seconds;
 * - e2e: test/e2e/<feature>/*.e2e-spec.ts on a real PostgreSQL (global-setup migrates a template
 *   that each file clones) and Redis, every response checked against the OpenAPI document:
 *   `npm run test:e2e`, or one feature: `npm test -- test/e2e/webhooks`;
 * - built: test/built/, the specs that start the built server (`node dist/main.js`) or read its
 *   module graph, after a build: `npm run test:built`.
 */

/** @type {import('jest').Config} */
const common = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  transform: {
    // CommonJS for jest's module system: the generated Prisma client loads its query compiler with
    // import(), which jest runs only as require() (the build keeps Node's native import()).
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node10' } }],
  },
  // The generated Prisma client imports its siblings as './x.js', as Node wants; jest resolves .ts.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/setup-env.ts'],
};

/** @type {import('jest').Config} */
const withServices = {
  ...common,
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // Fails a test that received a response breaking the OpenAPI document (see test/support).
  setupFilesAfterEnv: ['<rootDir>/test/support/contract-check.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  // A global option (jest ignores it in a project's config). A timeout catches a hang; it is not a
  // speed check: a file's setup (a database cloned, an application started) took over 30 s in CI,
  // with two jest workers beside lane B on two cores.
  testTimeout: 60000,
  // With --coverage (CI's first run): every source file counts, loaded by a test or not; V8's own
  // counters rather than instrumented code. Reported, not gated.
  collectCoverageFrom: [
    'src/**/*.ts',
    'clients/typescript/src/**/*.ts',
    '!**/*.spec.ts',
    '!src/generated/**',
    '!clients/typescript/src/schema.ts',
  ],
  coverageProvider: 'v8',
  coverageReporters: ['text-summary'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/clients/typescript/test/**/*.spec.ts',
        '<rootDir>/test/repo/**/*.spec.ts',
      ],
    },
    {
      ...withServices,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
    },
    {
      ...withServices,
      displayName: 'built',
      testMatch: ['<rootDir>/test/built/**/*.e2e-spec.ts'],
    },
  ],
};
