#!/usr/bin/env node
// npm runs this after `npm install` (and `npm ci`) at the root of a clone:
// - builds once when there is no build yet (`npm start` and `npm test` rebuild anyway, so an
//   existing build is left alone);
// - links node_modules/.bin/oncely to the CLI's build, so `npx oncely …` works in a clone as it
//   does where @oncely/cli is installed (npm links a workspace's bin before its build exists).
//   (A POSIX shell script: on Windows, run `node packages/cli/dist/cli/main.js` instead.)
// - in a clone, points git at .githooks (core.hooksPath), whose commit-msg hook holds commit
//   subjects to 72 characters (scripts/commit-msg.js).
// It prints only to stderr: `npm pack --json` writes its JSON to stdout, after this has run.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'packages', 'cli', 'dist', 'cli', 'main.js');
if (!existsSync(cli)) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', join(root, 'packages', 'cli')], {
    cwd: root,
    stdio: ['ignore', 2, 2],
  });
  execFileSync(process.execPath, [join(root, 'scripts', 'build-web.js')], {
    cwd: root,
    // The build's own output goes to stderr too.
    stdio: ['ignore', 2, 2],
  });
}
const bin = join(root, 'node_modules', '.bin');
if (existsSync(join(root, 'node_modules'))) {
  mkdirSync(bin, { recursive: true });
  const link = join(bin, 'oncely');
  rmSync(link, { force: true });
  // A script, not a symlink: it works whatever mode a rebuild leaves main.js with.
  writeFileSync(
    link,
    '#!/bin/sh\nexec node "$(dirname "$0")/../../packages/cli/dist/cli/main.js" "$@"\n',
    {
      mode: 0o755,
    },
  );
}
installHooks();

/** `git …` in the package root: its trimmed stdout, or undefined when git fails or is absent. */
function git(...args) {
  try {
    return execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/**
 * Sets core.hooksPath to .githooks when the package root is the top of its own git work tree.
 * Nothing happens, and nothing fails, anywhere else: a tarball or registry install (no git), a
 * package installed inside an app's repository (that repository's hooks are the app's), a
 * linked worktree (its config is the whole repository's: set it once in the main tree), or a
 * repository whose hooksPath already names other hooks.
 */
function installHooks() {
  const top = git('rev-parse', '--show-toplevel');
  if (top === undefined || realpathSync(top) !== realpathSync(root)) return;
  const gitDir = git('rev-parse', '--absolute-git-dir');
  const commonDir = git('rev-parse', '--git-common-dir');
  if (gitDir === undefined || commonDir === undefined) return;
  if (realpathSync(gitDir) !== realpathSync(resolve(root, commonDir))) {
    console.error('prepare: a linked worktree; run `git config core.hooksPath .githooks` once');
    return;
  }
  const current = git('config', '--get', 'core.hooksPath');
  if (current === '.githooks') return;
  if (current !== undefined && current !== '') {
    console.error(`prepare: core.hooksPath is ${current}; .githooks/commit-msg not installed`);
    return;
  }
  if (git('config', 'core.hooksPath', '.githooks') === undefined)
    console.error('prepare: could not set core.hooksPath to .githooks');
}
