// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist-bench/',
      'clients/typescript/dist/',
      'coverage/',
      'src/generated/',
      '.data/',
      'eslint.config.mjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      globals: { ...globals.node, ...globals.jest },
      parserOptions: {
        projectService: { allowDefaultProject: ['jest.config.js', 'src/dev/check-demo-port.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The serving path's only door to the database is the pool (src/database/database.ts):
    // Prisma is for the admin tool and the import. test/built/serving-boundary.e2e-spec.ts checks
    // the built server's module graph too, which catches an import through another module.
    files: ['src/**/*.ts'],
    ignores: [
      'src/prisma/**',
      'src/cli/**',
      'src/import/**',
      'src/deletion/**',
      'src/workspaces/**',
      'src/dev/**',
      'src/**/*.spec.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/prisma/prisma.service',
                '**/prisma/prisma.module',
                '**/generated/prisma/client',
                '@prisma/*',
              ],
              message:
                'The serving path uses the pool (src/database/database.ts), never Prisma: enumerations come from generated/prisma/enums.',
            },
          ],
        },
      ],
    },
  },
  {
    // CI's helper scripts: plain CommonJS run by node, outside the TypeScript project.
    files: ['.ci/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // supertest's response body is `any` by design; e2e specs assert on it directly.
    files: ['test/**/*.ts', 'src/**/*.spec.ts', 'clients/typescript/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
);
