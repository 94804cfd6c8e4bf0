/** @type {import('jest').Config} */
module.exports = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  transform: {
    // CommonJS for jest's module system: the generated Prisma client loads its query compiler with
    // import(), which jest runs only as require() (the build keeps Node's native import()).
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node10' } }],
  },
  // The generated Prisma client imports its siblings as './x.js', as Node wants; jest resolves .ts.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  // Fails a test that received a response breaking the OpenAPI document (see test/support).
  setupFilesAfterEnv: ['<rootDir>/test/support/contract-check.ts'],
  testTimeout: 30000,
};
