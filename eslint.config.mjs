// Lint for every workspace: ESLint's and typescript-eslint's recommended rules, and on TypeScript the
// type-aware rules that catch a promise nobody waits for or handles. Formatting is Prettier's
// (.prettierrc.json), so no stylistic rule is enabled here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The house's boundaries, held here rather than by review (docs/decisions: one package per process).
// Each process is a package under services/; what two share lives under shared/; deploy/local is the
// developer's launcher, which no product code may need.
const services = ['gateway', 'teltonika', 'trip-writer', 'group-writer'];
const serviceImports = (except) =>
  services
    .filter((name) => name !== except)
    .flatMap((name) => [`@fleet/${name}`, `@fleet/${name}/*`, `**/services/${name}/**`, `**/${name}/src/**`]);
const launcherImports = ['@fleet/local-stack', '@fleet/local-stack/*', '**/deploy/local/**'];
const restrict = (patterns, paths = []) => [
  'error',
  { paths, patterns: [{ group: patterns, message: 'crosses a boundary of the house (eslint.config.mjs)' }] },
];
/** A use case reaches PostgreSQL, Kafka, Redis and HTTP only through the ports it declares. */
const adapterPackages = ['express', 'pg', 'kafkajs', 'ioredis'].map((name) => ({
  name,
  message:
    'a use case declares a port for this; only data-access (*-store.ts), cache (*-cache.ts), feed (*-feed.ts) and edge files import it',
}));
const useCaseFolders = ['api-keys', 'auth', 'categories', 'devices', 'positions', 'streams', 'trip-locations', 'vehicle-groups'];
/** Adapters inside feature folders, by name: SQL in *-store.ts (and the timestamp text it reads), Redis in *-cache.ts, Kafka in *-feed.ts. */
const adapterFiles = ['**/*-store.ts', '**/stored-time.ts', '**/*-cache.ts', '**/*-feed.ts', '**/*.test.ts'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '.dev/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { console: 'readonly', process: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly' },
    },
    rules: {
      // Unused arguments and catch bindings named with a leading underscore are deliberate.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Each TypeScript file is read with the program it is compiled in: the workspaces' own, or the tests'.
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        project: [
          './tsconfig.test.json',
          './shared/tsconfig.json',
          './shared/write-path/tsconfig.json',
          './services/*/tsconfig.json',
          './deploy/local/tsconfig.json',
          './bench/tsconfig.json',
        ],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['shared/src/**/*.ts'],
    rules: { 'no-restricted-imports': restrict([...serviceImports(), '@fleet/write-path', '@fleet/write-path/*', ...launcherImports]) },
  },
  {
    files: ['shared/write-path/src/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        [...serviceImports(), ...launcherImports],
        [{ name: 'express', message: 'the write path is not HTTP' }],
      ),
    },
  },
  ...services.map((name) => ({
    files: [`services/${name}/src/**/*.ts`],
    rules: { 'no-restricted-imports': restrict([...serviceImports(name), ...launcherImports]) },
  })),
  {
    files: useCaseFolders.map((folder) => `services/*/src/${folder}/**/*.ts`),
    ignores: adapterFiles,
    rules: { 'no-restricted-imports': restrict([...serviceImports('gateway'), ...launcherImports], adapterPackages) },
  },
  {
    // Plain CommonJS scripts (jest's reporter, the PrometheusRule generator).
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests read loosely typed JSON bodies of HTTP answers.
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
