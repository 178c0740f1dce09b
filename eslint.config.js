// Lint rules: ESLint's and typescript-eslint's recommended sets, without type information so
// `npm test` stays fast; formatting is Prettier's (.prettierrc.json).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-control-regex': 'off',
    },
  },
  {
    // The console's progressive-enhancement scripts run in the browser.
    files: ['src/console/assets/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Tests, the CLI, the demo and the benches read untyped JSON answers from HTTP.
    files: ['test/**', 'bench/**', 'src/cli/**', 'server/demo.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
