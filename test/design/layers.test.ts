// Imports point downward only (docs/design.md, "Layers"): the order is read from the doc itself,
// every folder of src/ must be listed there, and no file imports a layer above its own. The
// pure layers import no node:* module. The apps (apps/) use the library as a user does: through
// the files behind package.json "exports", never a file inside a layer. The checkers are
// tested on small bad inputs first, so a green run over the trees means something.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkAppImports,
  checkFileImports,
  checkTree,
  importsOf,
  layersFromDesign,
  publicEntryFiles,
  sourceFiles,
  type AppRules,
  type LayerRules,
} from '../support/layer-imports.js';
import { repoPath } from '../support/repo-path.js';

const PURE = ['contract', 'time', 'policy'];
const layers = layersFromDesign(readFileSync(repoPath('docs', 'design.md'), 'utf8'));
const rules: LayerRules = { layers, pure: PURE };

describe('the layer checker', () => {
  const toy: LayerRules = {
    layers: ['contract', 'time', 'ledger', 'http'],
    pure: ['contract', 'time'],
  };

  it('reads static imports, type imports, re-exports and import()', () => {
    const source =
      "import { a } from './a.js';\nimport type {\n  B,\n} from '../b/b.js';\nexport { c } from './c.js';\nconst d = await import('../d/d.js');\n";
    assert.deepEqual(importsOf(source), ['./a.js', '../b/b.js', './c.js', '../d/d.js']);
  });

  it('refuses an import that runs up a layer, and accepts one that runs down', () => {
    const up = checkFileImports('ledger/ledger.ts', "import { x } from '../http/problem.js';", toy);
    assert.deepEqual(
      up.map((v) => v.why),
      ['ledger imports http, a layer above it'],
    );
    assert.deepEqual(
      checkFileImports('http/problem.ts', "import type { Y } from '../ledger/ledger.js';", toy),
      [],
    );
    assert.deepEqual(
      checkFileImports('ledger/a.ts', "import { z } from './b.js';", toy),
      [],
      'same layer',
    );
  });

  it('refuses node:* in a pure layer, an unlisted folder, and a path out of src', () => {
    assert.equal(
      checkFileImports('time/clock.ts', "import { setTimeout } from 'node:timers/promises';", toy)
        .length,
      1,
    );
    assert.equal(
      checkFileImports('ledger/l.ts', "import { x } from 'node:crypto';", toy).length,
      0,
      'ledger is not pure',
    );
    assert.match(
      checkFileImports('ledger/l.ts', "import { x } from '../journal/j.js';", toy)[0]?.why ?? '',
      /not a layer listed/,
    );
    assert.match(
      checkFileImports('ledger/l.ts', "import { x } from '../../test/t.js';", toy)[0]?.why ?? '',
      /outside src/,
    );
  });
});

describe('src/ against docs/design.md', () => {
  it('lists the layers in order, every folder of src/ among them', () => {
    assert.ok(layers.length >= 8, `read ${layers.length} layers from docs/design.md`);
    const folders = readdirSync(repoPath('src')).filter((name) =>
      statSync(join(repoPath('src'), name)).isDirectory(),
    );
    assert.deepEqual(
      folders.filter((folder) => !layers.includes(folder)),
      [],
      'folders of src/ missing from the Layers tree',
    );
    for (const pure of PURE) assert.ok(layers.includes(pure), pure);
  });

  it('no file of src/ imports a layer above its own, and the pure layers import no node:*', () => {
    const violations = checkTree(repoPath('src'), rules);
    assert.deepEqual(
      violations.map((v) => `${v.file}: ${v.specifier} (${v.why})`),
      [],
    );
  });
});

describe("apps/ against the library's exports", () => {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as Parameters<
    typeof publicEntryFiles
  >[0];
  const appRules: AppRules = {
    entries: publicEntryFiles(pkg),
    browserApps: { sim: PURE },
  };

  it('the checker refuses a file inside a layer, test/ and node:* in a browser app', () => {
    const toy: AppRules = {
      entries: ['src/index.ts', 'src/http/index.ts'],
      browserApps: { sim: ['time'] },
    };
    assert.deepEqual(
      checkAppImports('apps/serve/a.ts', "import { x } from '../../src/http/index.js';", toy),
      [],
    );
    assert.match(
      checkAppImports('apps/serve/a.ts', "import { x } from '../../src/http/problem.js';", toy)[0]
        ?.why ?? '',
      /through its exports/,
    );
    assert.match(
      checkAppImports('apps/cli/a.ts', "import { x } from '../../test/t.js';", toy)[0]?.why ?? '',
      /only apps/,
    );
    assert.equal(
      checkAppImports('apps/sim/a.ts', "import { x } from 'node:fs';", toy).length,
      1,
      'the simulator runs in a browser',
    );
    assert.deepEqual(
      checkAppImports('apps/sim/a.ts', "import { x } from '../../src/time/clock.js';", toy),
      [],
    );
    assert.equal(
      checkAppImports('apps/sim/a.ts', "import { x } from '../../src/index.js';", toy).length,
      1,
      'the root entry reaches node:http',
    );
  });

  it('reads the public entry files from package.json', () => {
    assert.ok(appRules.entries.includes('src/index.ts'));
    assert.ok(appRules.entries.includes('src/stores/sqlite/index.ts'));
    assert.ok(appRules.entries.every((file) => existsSync(repoPath(file))));
  });

  it('no file of apps/ imports the library past its exports', () => {
    const violations = sourceFiles(repoPath('apps')).flatMap((file) =>
      checkAppImports(`apps/${file}`, readFileSync(repoPath('apps', file), 'utf8'), appRules),
    );
    assert.deepEqual(
      violations.map((v) => `${v.file}: ${v.specifier} (${v.why})`),
      [],
    );
  });
});
