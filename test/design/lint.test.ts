// The lint config is a test too: run with the repository's own eslint.config.js, it must refuse
// a clock or randomness read outside src/time and a promise nobody awaits, and leave src/time alone.
// (`npm test` runs `npm run lint` over the tree before the tests.) The type information the
// promise rule needs comes from a program of the probe text alone: the config's own projects
// would type-check the whole repository for it, several seconds of this suite.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ESLint } from 'eslint';
import ts from 'typescript';
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

const PROBED = ['src/policy/decide.ts', 'src/time/clock.ts'];

/** A TypeScript program in which each probed path holds BAD (and the standard library). */
function probeProgram(): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts'],
    types: [],
    strict: true,
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const paths = new Set(PROBED.map((file) => repoPath(file)));
  const sourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (path, version, ...rest) =>
    paths.has(path) ? ts.createSourceFile(path, BAD, version) : sourceFile(path, version, ...rest);
  return ts.createProgram({ rootNames: [...paths], options, host });
}

describe('eslint.config.js', () => {
  let eslint: ESLint;
  const findings = async (file: string) => {
    const [result] = await eslint.lintText(BAD, { filePath: repoPath(file) });
    return (result?.messages ?? []).map((m) => `${m.line}:${m.ruleId}`);
  };
  before(() => {
    eslint = new ESLint({
      cwd: REPO_ROOT,
      overrideConfig: {
        languageOptions: { parserOptions: { project: false, programs: [probeProgram()] } },
      },
    });
  });

  it('refuses Date.now, Math.random, new Date() and setTimeout outside src/time, and a floating promise', async () => {
    assert.deepEqual(await findings(PROBED[0]!), [
      '1:no-restricted-properties',
      '2:no-restricted-properties',
      '3:no-restricted-syntax',
      '4:no-restricted-globals',
      '7:@typescript-eslint/no-floating-promises',
    ]);
  });

  it('lets src/time read the clock, but not drop a promise', async () => {
    assert.deepEqual(await findings(PROBED[1]!), ['7:@typescript-eslint/no-floating-promises']);
  });
});
