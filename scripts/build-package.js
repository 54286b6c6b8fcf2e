#!/usr/bin/env node
// What `npm pack` of a workspace package ships, built fresh: npm runs this as the package's
// prepack, in the package's folder (packages/oncely or packages/cli).
// - `tsc -b --clean`, then `tsc -b` of the package's tsconfig.json: no file of a removed source
//   survives in dist/ (the CLI's build takes the library's, which it references, along);
// - for a package with a page (packages/cli/web), the page into web/dist.
// What the builds print goes to stderr: `npm pack --json` writes its JSON to stdout after this.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = process.cwd();
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const quiet = { cwd: pkg, stdio: /** @type {const} */ (['ignore', 2, 2]) };
execFileSync(process.execPath, [tsc, '-b', '--clean', 'tsconfig.json'], quiet);
execFileSync(process.execPath, [tsc, '-b', 'tsconfig.json'], quiet);
if (existsSync(join(pkg, 'web')))
  execFileSync(process.execPath, [join(root, 'scripts', 'build-web.js')], quiet);
