// One jest run over every workspace: unit tests next to the code, component and end-to-end tests in test/.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleNameMapper: {
    '^@fleet/shared$': '<rootDir>/shared/src/index.ts',
    '^@fleet/gateway$': '<rootDir>/services/gateway/src/start.ts',
    '^@fleet/trip-writer$': '<rootDir>/services/trip-writer/src/start.ts',
    '^@fleet/group-writer$': '<rootDir>/services/group-writer/src/start.ts',
  },
  testMatch: ['<rootDir>/{shared,services,test,deploy,bench}/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
