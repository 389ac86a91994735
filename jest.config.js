// One jest run over every workspace: unit tests next to the code, component and end-to-end tests in test/.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    // Transpile only: types are checked by `tsc -p tsconfig.test.json` before jest runs. jose ships as ES
    // modules only, which Node requires natively but jest's module system does not, so it is transpiled
    // to CommonJS as well.
    '^.+\\.[tj]s$': [
      'ts-jest',
      {
        diagnostics: false,
        tsconfig: { module: 'commonjs', target: 'es2022', esModuleInterop: true, isolatedModules: true, sourceMap: true, allowJs: true },
      },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
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
