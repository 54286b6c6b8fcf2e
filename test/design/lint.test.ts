// The lint config is a test too: run with the repository's own eslint.config.js, it must refuse
// a clock or randomness read outside src/time and a promise nobody awaits, and leave src/time alone.
// (`npm test` runs `npm run lint` over the tree before the tests.)
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ESLint } from 'eslint';
import { REPO_ROOT, repoPath } from '../support/repo-path.js';

const BAD = [
  'export const at = Date.now();',
  'export const draw = Math.random();',
  'export const today = new Date();',
  'setTimeout(() => {}, 10);',
  'export const fine = new Date(0).toISOString();',
  'async function work(): Promise<number> { return 1; }',
  'work();',
  '',
].join('\n');

describe('eslint.config.js', () => {
  let eslint: ESLint;
  const findings = async (file: string) => {
    const [result] = await eslint.lintText(BAD, { filePath: repoPath(file) });
    return (result?.messages ?? []).map((m) => `${m.line}:${m.ruleId}`);
  };
  before(() => {
    eslint = new ESLint({ cwd: REPO_ROOT });
  });

  it('refuses Date.now, Math.random, new Date() and setTimeout outside src/time, and a floating promise', async () => {
    assert.deepEqual(await findings('src/policy/decide.ts'), [
      '1:no-restricted-properties',
      '2:no-restricted-properties',
      '3:no-restricted-syntax',
      '4:no-restricted-globals',
      '7:@typescript-eslint/no-floating-promises',
    ]);
  });

  it('lets src/time read the clock, but not drop a promise', async () => {
    assert.deepEqual(await findings('src/time/clock.ts'), [
      '7:@typescript-eslint/no-floating-promises',
    ]);
  });
});
