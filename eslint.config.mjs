// Lint for every workspace: ESLint's and typescript-eslint's recommended rules, and on TypeScript the
// type-aware rules that catch a promise nobody waits for or handles. Formatting is Prettier's
// (.prettierrc.json), so no stylistic rule is enabled here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
