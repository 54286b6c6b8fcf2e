// scripts/prepare.js and scripts/build-package.js print only to stderr: npm writes
// `npm pack --json`'s JSON to stdout after they ran, so a line of theirs there breaks
// `npm pack --dry-run --json | jq`. And prepare installs the commit-msg hook in a clone, and
// nowhere else. Each test runs the real scripts in a small project of its own: the package's
// full build, which prepack runs, takes most of a minute; a one-file build shows the same.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_SRC, repoPath } from '../support/repo-path.js';

const work = mkdtempSync(join(tmpdir(), 'oncely-prepare-'));
after(() => rmSync(work, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd: string) {
  const result = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const git = (cwd: string, ...args: string[]) =>
  run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], cwd);

/** A project holding the real prepare script and a build: prepare has nothing to build. */
function builtProject(dir: string): string {
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  mkdirSync(join(dir, 'packages', 'cli', 'dist', 'cli'), { recursive: true });
  cpSync(repoPath('scripts', 'prepare.js'), join(dir, 'scripts', 'prepare.js'));
  writeFileSync(join(dir, 'packages', 'cli', 'dist', 'cli', 'main.js'), '');
  return dir;
}

test('npm pack --dry-run --json of a package prints JSON alone: its prepack builds on stderr', () => {
  // A workspace like this one, with the real scripts: a package with a page, as the CLI is.
  const dir = join(work, 'pack');
  const cli = join(dir, 'packages', 'cli');
  mkdirSync(join(cli, 'src', 'cli'), { recursive: true });
  mkdirSync(join(cli, 'web'), { recursive: true });
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  cpSync(repoPath('scripts', 'build-package.js'), join(dir, 'scripts', 'build-package.js'));
  // The web build prints a summary line to stdout, as the real one does.
  writeFileSync(join(dir, 'scripts', 'build-web.js'), "console.log('web/dist: 1 file');\n");
  writeFileSync(join(cli, 'src', 'cli', 'main.ts'), 'export const main = 1;\n');
  writeFileSync(
    join(cli, 'tsconfig.json'),
    JSON.stringify({
      // The smallest build to check against: one line takes a second, not the CLI's thirty.
      compilerOptions: {
        outDir: 'dist',
        rootDir: 'src',
        module: 'NodeNext',
        types: [],
        lib: ['ES5'],
        skipLibCheck: true,
      },
      include: ['src'],
    }),
  );
  const real = JSON.parse(readFileSync(repoPath(CLI_SRC, '..', 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  writeFileSync(
    join(cli, 'package.json'),
    JSON.stringify({
      name: 'probe',
      version: '1.0.0',
      type: 'module',
      files: ['dist'],
      scripts: { prepack: real.scripts['prepack'] },
    }),
  );
  // TypeScript is found from above the project: npm reads a project's own node_modules when it
  // packs, and this one's is large.
  symlinkSync(repoPath('node_modules'), join(work, 'node_modules'));

  const pack = run('npm', ['pack', '--dry-run', '--json'], cli);
  assert.equal(pack.status, 0, pack.stderr);
  assert.match(pack.stderr, /web\/dist: 1 file/, 'the build ran, and said so on stderr');
  const [info] = JSON.parse(pack.stdout) as [{ files: { path: string }[] }];
  assert.ok(info.files.some((file) => file.path === 'dist/cli/main.js'));
});

test('in a clone, prepare points core.hooksPath at .githooks, and prints nothing to stdout', () => {
  const dir = builtProject(join(work, 'clone'));
  git(dir, 'init', '-q');
  const prepare = run(process.execPath, ['scripts/prepare.js'], dir);
  assert.equal(prepare.status, 0, prepare.stderr);
  assert.equal(prepare.stdout, '');
  assert.equal(git(dir, 'config', '--get', 'core.hooksPath').stdout.trim(), '.githooks');
});

test("prepare leaves alone hooks a repository has already, and an app's repository", () => {
  const own = builtProject(join(work, 'own-hooks'));
  git(own, 'init', '-q');
  git(own, 'config', 'core.hooksPath', '.husky');
  assert.equal(run(process.execPath, ['scripts/prepare.js'], own).status, 0);
  assert.equal(git(own, 'config', '--get', 'core.hooksPath').stdout.trim(), '.husky');

  // The package installed inside an app that is a git repository: the app's hooks are its own.
  const app = join(work, 'app');
  mkdirSync(app, { recursive: true });
  git(app, 'init', '-q');
  const installed = builtProject(join(app, 'node_modules', 'oncely'));
  assert.equal(run(process.execPath, ['scripts/prepare.js'], installed).status, 0);
  assert.equal(git(app, 'config', '--get', 'core.hooksPath').status, 1, 'unset');
});

test("prepare sets nothing from a linked worktree (its config is the whole repository's), and runs outside git", () => {
  const main = builtProject(join(work, 'main'));
  git(main, 'init', '-q');
  git(main, 'commit', '-q', '--allow-empty', '-m', 'init');
  const linked = join(work, 'linked');
  assert.equal(git(main, 'worktree', 'add', '-q', linked).status, 0);
  builtProject(linked);
  const prepare = run(process.execPath, ['scripts/prepare.js'], linked);
  assert.equal(prepare.status, 0, prepare.stderr);
  assert.match(prepare.stderr, /linked worktree/);
  assert.equal(git(main, 'config', '--get', 'core.hooksPath').status, 1, 'unset');

  const loose = builtProject(join(work, 'no-git'));
  const outside = run(process.execPath, ['scripts/prepare.js'], loose);
  assert.equal(outside.status, 0, outside.stderr);
  assert.equal(outside.stdout, '');
});
