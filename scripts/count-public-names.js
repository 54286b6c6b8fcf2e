#!/usr/bin/env node
// Counts the public names of the package: every name (value or type) that a subpath of
// package.json "exports" offers, read from the built .d.ts through the TypeScript compiler, as a
// user's editor would see them. Run after a build:
//   node scripts/count-public-names.js          one line per subpath, then the totals
//   node scripts/count-public-names.js --json   the names themselves, by subpath
//   node scripts/count-public-names.js DIR      a package at DIR (its package.json and dist)
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const args = process.argv.slice(2);
const json = args.includes('--json');
const dir = resolve(
  args.find((arg) => !arg.startsWith('--')) ?? join(dirname(fileURLToPath(import.meta.url)), '..'),
);
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const subpaths = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === 'object' && target.types ? [[subpath, join(dir, target.types)]] : [],
);

const program = ts.createProgram(
  subpaths.map(([, file]) => file),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
  },
);
const checker = program.getTypeChecker();

const bySubpath = {};
for (const [subpath, file] of subpaths) {
  const source = program.getSourceFile(file);
  if (source === undefined) throw new Error(`${subpath}: no declarations at ${file} (build first)`);
  const module = checker.getSymbolAtLocation(source);
  bySubpath[subpath] =
    module === undefined
      ? []
      : checker
          .getExportsOfModule(module)
          .map((s) => s.name)
          .sort();
}

if (json) {
  console.log(JSON.stringify(bySubpath, null, 2));
} else {
  let sum = 0;
  const distinct = new Set();
  for (const [subpath, names] of Object.entries(bySubpath)) {
    console.log(`${subpath.padEnd(20)} ${String(names.length).padStart(4)}`);
    sum += names.length;
    for (const name of names) distinct.add(name);
  }
  console.log(
    `${'all subpaths'.padEnd(20)} ${String(sum).padStart(4)} (${distinct.size} distinct names)`,
  );
}
