// Flat config: typescript-eslint's recommended rules on every .ts file.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.stack/**',
      '.tap/**',
      'services/ingress/public/**',
      'services/dashboard/dist/**',
      'sdk/typescript/dist/**',
      'sdk/typescript/src/openapi.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
);
