#!/usr/bin/env node
// What `npm pack` and a git install ship: the library in dist/src and the apps (the CLI, the
// server, the lab, the simulator) in dist/apps, both fresh (no file of a removed source survives),
// and the simulator page in web/dist. The tests, benches and examples are not built here.
// What the builds print goes to stderr: `npm pack --json` writes its JSON to stdout after this.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const tree of ['src', 'apps'])
  rmSync(join(root, 'dist', tree), { recursive: true, force: true });
// The record of `npm run build`'s incremental compile would take the removed outputs as current.
rmSync(join(root, 'dist', '.tsbuildinfo'), { force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.package.json')], {
  cwd: root,
  stdio: ['ignore', 2, 2],
});
execFileSync(process.execPath, [join(root, 'scripts', 'build-web.js')], {
  cwd: root,
  stdio: ['ignore', 2, 2],
});
