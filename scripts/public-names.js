// The public names of a package: every name (value or type) that a subpath of its package.json
// "exports" offers, read from the built .d.ts through the TypeScript compiler, as a user's editor
// would see them. Used by scripts/count-public-names.js and test/public-surface.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The names each subpath of the package at `dir` offers, sorted (throws before a build). */
export function publicNamesBySubpath(dir) {
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
    if (source === undefined)
      throw new Error(`${subpath}: no declarations at ${file} (build first)`);
    const module = checker.getSymbolAtLocation(source);
    bySubpath[subpath] =
      module === undefined
        ? []
        : checker
            .getExportsOfModule(module)
            .map((s) => s.name)
            .sort();
  }
  return bySubpath;
}

/** How many names all subpaths offer together, and how many distinct names that is. */
export function countPublicNames(bySubpath) {
  const all = Object.values(bySubpath).flat();
  return { total: all.length, distinct: new Set(all).size };
}
