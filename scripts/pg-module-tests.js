// Which test files build PostgreSQL pools from the node-postgres ONCELY_TEST_PG_MODULE names, so
// that a run on another pg (scripts/check.js: pg 8.11, no pipeline mode) runs them and only them.
//   import { pgModuleTests } from './pg-module-tests.js'; pgModuleTests(['test/stores/'])
// test/stores/postgres-env.ts loads that pg; its exports below make pools or clients from it. A
// file that takes none of them (directly or through a helper of test/) runs the same on every
// pg module: the ORM tests build their pools through the ORM from `pg` itself, the crash
// tests' children too; they use postgres-env only to find the server and drop their schemas.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ENV = resolve('test/stores/postgres-env.ts');
/** postgres-env's exports built on the chosen pg (the rest only probe, name or drop). */
const FROM_PG_MODULE = new Set(['pg', 'PG_MODULE', 'storeInFreshSchema']);

/** The relative imports of a source and the names each brings in ('*' for all of them). */
function imports(file) {
  const source = readFileSync(file, 'utf8');
  const found = [];
  const statement = /(?:import|export)\s+(?:type\s+)?([^'";]*?)\s*from\s+'(\.[^']+)'/g;
  for (const [, clause, specifier] of source.matchAll(statement)) {
    const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
    if (!existsSync(target)) continue;
    const braces = /\{([^}]*)\}/.exec(clause);
    const names = braces
      ? braces[1]
          .split(',')
          .map(
            (name) =>
              name
                .trim()
                .replace(/^type\s+/, '')
                .split(/\s+as\s+/)[0],
          )
          .filter(Boolean)
      : ['*'];
    found.push({ target, names });
  }
  return found;
}

/** Whether `file` (a test/ source) reaches a pool or client of the chosen pg. */
function usesPgModule(file, seen = new Map()) {
  if (seen.has(file)) return seen.get(file);
  seen.set(file, false); // an import cycle adds nothing
  const uses = imports(file).some(({ target, names }) =>
    target === ENV
      ? names.some((name) => name === '*' || FROM_PG_MODULE.has(name))
      : target.startsWith(resolve('test')) && usesPgModule(target, seen),
  );
  seen.set(file, uses);
  return uses;
}

function testSources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testSources(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The test files under `dirs` (test/…/) that use the chosen pg, as run-tests.js filters. */
export function pgModuleTests(dirs) {
  const seen = new Map();
  return dirs
    .flatMap(testSources)
    .filter((file) => usesPgModule(resolve(file), seen))
    .map((file) => `${relative('.', file).replace(/\.ts$/, '.js')}`)
    .sort();
}
