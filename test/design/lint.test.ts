// The lint and format configs are tests too. Run with the repository's own .oxlintrc.json, the
// lint must refuse a clock or randomness read outside src/time and a promise nobody awaits, and
// leave src/time its clock; it must refuse a function of src over 100 lines of code and a file of
// src over 300 lines, and leave tests their length; run with its own biome.json, the format check must refuse a file
// Biome would reformat. (`npm test` runs both over the tree beside the tests, scripts/check.js.)
// Each runs in a directory of its own probe files with a copy of the config, so the type-aware
// rules build a program of the probes alone, not of the whole repository.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { packageBin as bin } from '../support/package-bin.js';
import { repoPath } from '../support/repo-path.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function runNode(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A directory holding `files` (path → text), removed after the suite. */
function probeDirectory(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-lint-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

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

/** A function of `statements` lines of code, with `padding` blank lines and comments among them. */
function functionOf(statements: number, padding = 0): string {
  const body = Array.from({ length: statements }, (_, i) => `  total += ${i};`);
  for (let i = 0; i < padding; i++) body.splice(i * 2, 0, i % 2 === 0 ? '' : '  // why');
  return [
    'export function long(): number {',
    '  let total = 0;',
    ...body,
    '  return total;',
    '}',
    '',
  ].join('\n');
}

/** A file of `lines` lines, each a statement. */
function fileOf(lines: number): string {
  return `${Array.from({ length: lines }, (_, i) => `export const v${i} = ${i};`).join('\n')}\n`;
}

describe('.oxlintrc.json', () => {
  let findings: Map<string, string[]>;
  before(async () => {
    // The copy names the repository's plugin by its absolute path; the rest (type-aware
    // included) is as it stands.
    const config = readFileSync(repoPath('.oxlintrc.json'), 'utf8').replace(
      './scripts/lint/clock-plugin.js',
      repoPath('scripts', 'lint', 'clock-plugin.js'),
    );
    const tsconfig = { compilerOptions: { strict: true, target: 'ES2022', types: [] } };
    const dir = probeDirectory({
      '.oxlintrc.json': config,
      'tsconfig.json': JSON.stringify(tsconfig),
      'packages/oncely/src/policy/decide.ts': BAD,
      'packages/oncely/src/time/clock.ts': BAD,
      // 101 lines of code counted (the statements, `let`, `return` and the closing brace).
      'packages/oncely/src/client/long-function.ts': functionOf(97),
      // 100 counted, and 40 blank or comment lines that the rule skips.
      'packages/oncely/src/client/padded-function.ts': functionOf(96, 40),
      'packages/oncely/src/client/long-file.ts': fileOf(301),
      'packages/oncely/src/client/full-file.ts': fileOf(300),
      // The size rules are the library's: a test or a script may be longer.
      'test/long-file.ts': fileOf(301) + functionOf(120),
    });
    const { stdout } = await runNode(
      [bin('oxlint'), '--format', 'json'],
      dir,
      // oxlint looks for tsgolint under the working directory; the probes are elsewhere.
      { OXLINT_TSGOLINT_PATH: bin('oxlint-tsgolint', 'tsgolint') },
    );
    const report = JSON.parse(stdout) as {
      diagnostics: { code: string; filename: string; labels: { span: { line: number } }[] }[];
    };
    findings = new Map();
    for (const d of report.diagnostics) {
      const list = findings.get(d.filename) ?? [];
      list.push(`${d.labels[0]!.span.line}:${d.code}`);
      findings.set(d.filename, list);
    }
    for (const list of findings.values()) list.sort();
  });

  it('refuses Date.now, Math.random, new Date() and setTimeout outside src/time, and a floating promise', () => {
    assert.deepEqual(findings.get('packages/oncely/src/policy/decide.ts'), [
      '1:eslint(no-restricted-properties)',
      '2:eslint(no-restricted-properties)',
      '3:oncely(no-argument-date)',
      '4:eslint(no-restricted-globals)',
      '7:typescript(no-floating-promises)',
    ]);
  });

  it('refuses a function of src over 100 lines of code and a file of src over 300 lines', () => {
    assert.deepEqual(findings.get('packages/oncely/src/client/long-function.ts'), [
      '1:eslint(max-lines-per-function)',
    ]);
    assert.deepEqual(findings.get('packages/oncely/src/client/long-file.ts'), [
      '301:eslint(max-lines)',
    ]);
  });

  it('counts no blank line or comment in a function, and holds tests and scripts to neither size', () => {
    assert.equal(findings.get('packages/oncely/src/client/padded-function.ts'), undefined);
    assert.equal(findings.get('packages/oncely/src/client/full-file.ts'), undefined);
    assert.equal(findings.get('test/long-file.ts'), undefined);
  });

  it('lets src/time read the clock, but not drop a promise', () => {
    assert.deepEqual(findings.get('packages/oncely/src/time/clock.ts'), [
      '7:typescript(no-floating-promises)',
    ]);
  });
});

describe('biome.json', () => {
  it('refuses a file the formatter would change (double quotes, a line past 100 columns), passes a formatted one', async () => {
    const config = JSON.parse(readFileSync(repoPath('biome.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    // The probes are not in a git repository, so the copy reads no ignore file.
    delete config.$schema;
    config.vcs = { enabled: false };
    const long = `export const long = [${Array.from({ length: 20 }, (_, i) => `'v${i}'`).join(', ')}];\n`;
    const dir = probeDirectory({
      'biome.json': JSON.stringify(config),
      'src/quoted.ts': 'export const quoted = "double";\n',
      'src/long.ts': long,
      'src/tidy.ts': "export const tidy = { a: 1, b: 'two' };\n",
    });
    assert.ok(long.length > 101, 'the long probe is past 100 columns');
    // Biome reports on stderr; the pattern reads only the probes' names, not the config's.
    const { code, stderr } = await runNode(
      [bin('@biomejs/biome', 'biome'), 'format', '--colors=off', '--max-diagnostics=50', '.'],
      dir,
    );
    assert.equal(code, 1, stderr);
    const flagged = [...stderr.matchAll(/^(src\/\S+\.ts) format/gm)].map((m) => m[1]).sort();
    assert.deepEqual(flagged, ['src/long.ts', 'src/quoted.ts']);
  });
});
