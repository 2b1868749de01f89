// eslint as the OpenShift console plugin template sets it up for plugins
// built on the dynamic plugin SDK (openshift/console-plugin-template,
// eslint.config): eslint's and typescript-eslint's recommended rules with
// type information, React's and the Hooks' rules, jest's and Testing
// Library's for the unit tests, and prettier for the layout.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import react from 'eslint-plugin-react';
import reactHooks from 'eslint-plugin-react-hooks';
import jest from 'eslint-plugin-jest';
import testingLibrary from 'eslint-plugin-testing-library';
import prettier from 'eslint-plugin-prettier/recommended';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'dist-host/', 'node_modules/'] },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  reactHooks.configs['recommended-latest'],
  {
    files: ['**/*.{ts,tsx}'],
    plugins: { react },
    rules: {
      ...react.configs.recommended.rules,
      ...react.configs['jsx-runtime'].rules,
      '@typescript-eslint/consistent-type-imports': 'error',
      // It needs strictNullChecks, which the plugin's tsconfig does not
      // set; and an empty string is as good as none where the pages show
      // '-' for a field not set (hostingCluster: "", say): `||` is meant.
      '@typescript-eslint/prefer-nullish-coalescing': 'off',
    },
    languageOptions: {
      globals: globals.browser,
      // tsconfig.eslint.json: the plugin's sources and the test host's.
      parserOptions: {
        project: './tsconfig.eslint.json',
        tsconfigRootDir: import.meta.dirname,
        ecmaFeatures: { jsx: true },
      },
    },
    settings: { react: { version: 'detect' } },
  },
  {
    files: ['src/__tests__/**/*.{ts,tsx}'],
    ...jest.configs['flat/recommended'],
    ...testingLibrary.configs['flat/react'],
    plugins: { ...jest.configs['flat/recommended'].plugins, ...testingLibrary.configs['flat/react'].plugins },
    languageOptions: { globals: { ...globals.jest, ...globals.node } },
    rules: {
      ...jest.configs['flat/recommended'].rules,
      ...testingLibrary.configs['flat/react'].rules,
      // jest's asymmetric matchers (expect.objectContaining, ...) and a
      // mock's recorded calls are typed any.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The build and test scripts run in Node.js, untyped; the webpack and
    // jest configurations are CommonJS.
    files: ['**/*.{js,mjs}'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: globals.node },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // What it hands to page.evaluate runs in the page.
    files: ['test/browser.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  prettier,
);
