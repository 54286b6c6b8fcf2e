#!/usr/bin/env node
// npm runs this after `npm install` in a clone and when a git dependency is installed:
// - builds once when there is no build yet (a git install packs what this builds; in a clone,
//   `npm start` and `npm test` rebuild anyway, so an existing build is left alone);
// - links node_modules/.bin/oncely to the CLI, so `npx oncely …` works in a clone as it does in
//   an app that installed the package (npm links the bins of dependencies, never the project's own).
//   (A POSIX shell script: on Windows, run `node dist/apps/cli/main.js` instead.)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'apps', 'cli', 'main.js');
if (!existsSync(cli)) {
  execFileSync(process.execPath, [join(root, 'scripts', 'build-package.js')], {
    cwd: root,
    stdio: 'inherit',
  });
}
const bin = join(root, 'node_modules', '.bin');
if (existsSync(join(root, 'node_modules'))) {
  mkdirSync(bin, { recursive: true });
  const link = join(bin, 'oncely');
  rmSync(link, { force: true });
  // A script, not a symlink: it works whatever mode a rebuild leaves main.js with.
  writeFileSync(link, '#!/bin/sh\nexec node "$(dirname "$0")/../../dist/apps/cli/main.js" "$@"\n', {
    mode: 0o755,
  });
}
