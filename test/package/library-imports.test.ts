// The library package carries only what its own code runs: importing `oncely`, or any subpath of
// it, loads none of the CLI's dependencies (commander, cli-progress, prom-client) nor hono,
// which `oncely/hono` names for its types alone. Each import runs in a process of its own with a
// module hook that writes down every module resolved from node_modules; the packages are
// installed in this repository, so a stray import would find them and be written down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publicSpecifiers } from '../support/layer-imports.js';
import { LIBRARY_SRC, REPO_ROOT, repoPath } from '../support/repo-path.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-imports-');
const FORBIDDEN = ['commander', 'cli-progress', 'prom-client', 'hono'];

/** A resolve hook that appends each package a module came from to the file in LOADED_LOG. */
const HOOK = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const found = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(result.url);
  if (found) appendFileSync(process.env.LOADED_LOG, found[1] + '\\n');
  return result;
}`;

/** The packages from node_modules that importing `specifier` loads, in a fresh process. */
function packagesLoadedBy(specifier: string, log: string): string[] {
  const script = [
    "import { register } from 'node:module';",
    `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));`,
    `await import(${JSON.stringify(specifier)});`,
  ].join('\n');
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, LOADED_LOG: log },
  });
  assert.equal(result.status, 0, result.stderr);
  try {
    return [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
  } catch {
    return []; // nothing from node_modules at all
  }
}

const library = JSON.parse(readFileSync(repoPath(LIBRARY_SRC, '..', 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, unknown>;
};

test('the hook sees a package that is loaded (the check below can fail)', () => {
  assert.deepEqual(packagesLoadedBy('commander', join(dir, 'control.log')), ['commander']);
});

test('oncely and each of its subpaths load none of the CLI dependencies, nor hono', () => {
  const subpaths = publicSpecifiers(library);
  assert.ok(subpaths.length >= 10, subpaths.join(' '));
  for (const specifier of subpaths) {
    const loaded = packagesLoadedBy(specifier, join(dir, `${specifier.replaceAll('/', '_')}.log`));
    assert.deepEqual(
      loaded.filter((name) => FORBIDDEN.includes(name)),
      [],
      `${specifier} loads ${loaded.join(', ')}`,
    );
  }
});
