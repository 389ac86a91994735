// One jest configuration over every workspace, in three projects:
// - unit: the tests next to the code, the bench's pure parts and the deployment files' checks. No
//   servers and no build: `npm run test:unit` is the fast inner loop.
// - component: the tests in test/ that run services in-process or as processes against the run's real
//   PostgreSQL, Redis and Kafka, which the global setup provides (after building the services).
// - heavy: the suites with a broker or a whole stack of their own (the fault tests, the launcher, the
//   bench harness). `npm test` runs them after the others, one file at a time (--runInBand), so that two
//   JVM brokers and two stacks never compete for a 2-core machine.
const transform = {
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
};

const common = {
  testEnvironment: '<rootDir>/test/support/deadline-environment.js',
  transform,
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  moduleNameMapper: {
    '^@fleet/shared/(.*)$': '<rootDir>/shared/src/$1',
    '^@fleet/gateway$': '<rootDir>/services/gateway/src/start.ts',
    '^@fleet/gateway/(.*)$': '<rootDir>/services/gateway/src/$1',
    '^@fleet/write-path/(.*)$': '<rootDir>/shared/write-path/src/$1',
    '^@fleet/teltonika/codec$': '<rootDir>/services/teltonika/src/codec.ts',
    '^@fleet/local-stack/(.*)$': '<rootDir>/deploy/local/src/$1',
    '^@fleet/trip-writer$': '<rootDir>/services/trip-writer/src/start.ts',
    '^@fleet/group-writer$': '<rootDir>/services/group-writer/src/start.ts',
    '^@fleet/event-processor$': '<rootDir>/services/event-processor/src/start.ts',
  },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};

const withServers = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

/** Suites that start a broker or a stack of their own. */
const heavy = [
  '<rootDir>/test/reliability/**/*.test.ts',
  '<rootDir>/test/observability/launcher*.test.ts',
  '<rootDir>/test/observability/kafka-cli.test.ts',
  '<rootDir>/bench/src/bench.test.ts',
  '<rootDir>/bench/src/replication-bench.test.ts',
  '<rootDir>/bench/src/client-pipeline-bench.test.ts',
];

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60_000,
  maxWorkers: 2,
  // A worker that has run the component suites holds most of a gigabyte, and on a loaded 2-core machine
  // the process takes longer than jest's 500 ms to give it back once it exits: jest then reports a
  // forced exit that is no leak. A worker kept alive by an open socket, or a timer longer than this, is
  // still reported.
  workerGracefulExitTimeout: 5000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/{shared,services,deploy}/**/*.test.ts',
        '<rootDir>/bench/src/*.test.ts',
        '<rootDir>/test/deploy/**/*.test.ts',
        '<rootDir>/test/support/*.test.ts',
      ],
      testPathIgnorePatterns: [
        ...common.testPathIgnorePatterns,
        '<rootDir>/bench/src/bench.test.ts',
        '<rootDir>/bench/src/replication-bench.test.ts',
        '<rootDir>/bench/src/client-pipeline-bench.test.ts',
      ],
    },
    {
      ...common,
      ...withServers,
      displayName: 'component',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: [
        ...common.testPathIgnorePatterns,
        '<rootDir>/test/deploy/',
        '<rootDir>/test/support/',
        '<rootDir>/test/reliability/',
        '<rootDir>/test/observability/launcher',
        '<rootDir>/test/observability/kafka-cli.test.ts',
      ],
    },
    { ...common, ...withServers, displayName: 'heavy', testMatch: heavy },
  ],
};
