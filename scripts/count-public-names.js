#!/usr/bin/env node
// Counts the public names of the library: every name (value or type) that a subpath of its
// package.json "exports" offers, as a user's editor would see them (scripts/public-names.js).
// Run after a build:
//   node scripts/count-public-names.js          one line per subpath, then the totals
//   node scripts/count-public-names.js --json   the names themselves, by subpath
//   node scripts/count-public-names.js DIR      the package at DIR (default: packages/oncely)
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countPublicNames, publicNamesBySubpath } from './public-names.js';

const args = process.argv.slice(2);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = resolve(args.find((arg) => !arg.startsWith('--')) ?? join(root, 'packages', 'oncely'));
const bySubpath = publicNamesBySubpath(dir);

if (args.includes('--json')) {
  console.log(JSON.stringify(bySubpath, null, 2));
} else {
  for (const [subpath, names] of Object.entries(bySubpath))
    console.log(`${subpath.padEnd(20)} ${String(names.length).padStart(4)}`);
  const { total, distinct } = countPublicNames(bySubpath);
  console.log(
    `${'all subpaths'.padEnd(20)} ${String(total).padStart(4)} (${distinct} distinct names)`,
  );
}
