import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const transportAndVendor = [
  { name: 'ws', message: 'packages/core stays transport-free.' },
  { name: 'openai', message: 'Vendor adapters live in apps/server.' },
  { name: 'react', message: 'packages/core stays UI-free.' },
];
const transportPatterns = [
  { group: ['@trpc/*'], message: 'packages/core stays transport-free.' },
  { group: ['@modelcontextprotocol/*'], message: 'Vendor adapters live in apps/server.' },
  { group: ['node:*'], message: 'packages/core runs in browsers too: no Node-only modules.' },
];

export const coreImportRule = {
  files: ['src/**/*.ts'],
  ignores: ['src/**/*.test.ts'],
  rules: {
    'no-restricted-imports': ['error', { paths: transportAndVendor, patterns: transportPatterns }],
  },
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.reports/**', '**/.turbo/**', '**/*.config.*', '**/bin/**', '**/public/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/only-throw-error': 'off',
    },
  },
  {
    // Plain JavaScript (a module that must load before TypeScript can, typed by the .d.ts beside it): no type information.
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['**/*.test.ts', '**/*.test.tsx', '**/test/**', '**/e2e/**', '**/bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
