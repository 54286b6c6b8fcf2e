// The project's lint rules (ESLint flat config, typescript-eslint with type information).
// `npm test` runs it before the tests; `npm run lint` alone.
import tseslint from 'typescript-eslint';

/**
 * Only src/time reads the clock or randomness (docs/design.md, habit 2): everything else gets a
 * Clock and a Random as options, so tests drive a VirtualClock and nothing patches globals.
 */
const CLOCK_READ =
  'read the injected Clock or Random (src/time): only src/time touches the real clock, timers or randomness';

export const clockRules = {
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: CLOCK_READ },
    { object: 'Math', property: 'random', message: CLOCK_READ },
    { object: 'performance', property: 'now', message: CLOCK_READ },
    { object: 'globalThis', property: 'setTimeout', message: CLOCK_READ },
  ],
  'no-restricted-globals': [
    'error',
    { name: 'setTimeout', message: CLOCK_READ },
    { name: 'setInterval', message: CLOCK_READ },
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: "NewExpression[callee.name='Date'][arguments.length=0]",
      message: `new Date() reads the clock: ${CLOCK_READ}`,
    },
    {
      selector: "CallExpression[callee.name='Date'][arguments.length=0]",
      message: `Date() reads the clock: ${CLOCK_READ}`,
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'web/dist/**', 'test-output/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      // The two programs, listed: the project service found the same ones per file, for about
      // 15 % more of the lint's CPU time.
      parserOptions: {
        project: ['./tsconfig.json', './web/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Promises nobody awaits lose their errors; a promise passed where a void callback is
      // expected does too. These need the type checker, which is why the lint is type-aware.
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test runs what `test` and `describe` register; their promises need no await.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      // `x == null` (null or undefined) is the one loose comparison worth keeping.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  { files: ['src/**/*.ts'], ignores: ['src/time/**'], rules: clockRules },
);
