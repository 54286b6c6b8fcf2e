// Imports point downward only (docs/design.md, "Layers"): the order is read from the doc itself,
// every folder of the library's src/ must be listed there, and no file imports a layer above its
// own. The pure layers import no node:* module. The CLI package, its page, the benches and the
// examples use the library as a user does: through package.json "exports", never a file inside
// a layer. The checkers are
// tested on small bad inputs first, so a green run over the trees means something.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkConsumerImports,
  checkFileImports,
  checkTree,
  importsOf,
  layersFromDesign,
  publicSpecifiers,
  sourceFiles,
  type ConsumerRules,
  type ConsumerTree,
  type LayerRules,
} from '../support/layer-imports.js';
import { CLI_SRC, LIBRARY_SRC, repoPath, WEB_SRC } from '../support/repo-path.js';

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

describe("the library's layers against docs/design.md", () => {
  it('lists the layers in order, every folder of src/ among them', () => {
    assert.ok(layers.length >= 8, `read ${layers.length} layers from docs/design.md`);
    const folders = readdirSync(repoPath(LIBRARY_SRC)).filter((name) =>
      statSync(join(repoPath(LIBRARY_SRC), name)).isDirectory(),
    );
    assert.deepEqual(
      folders.filter((folder) => !layers.includes(folder)),
      [],
      'folders of src/ missing from the Layers tree',
    );
    for (const pure of PURE) assert.ok(layers.includes(pure), pure);
  });

  it('no file of src/ imports a layer above its own, and the pure layers import no node:*', () => {
    const violations = checkTree(repoPath(LIBRARY_SRC), rules);
    assert.deepEqual(
      violations.map((v) => `${v.file}: ${v.specifier} (${v.why})`),
      [],
    );
  });
});

describe("the library's users against its exports", () => {
  const library = JSON.parse(
    readFileSync(repoPath(LIBRARY_SRC, '..', 'package.json'), 'utf8'),
  ) as Parameters<typeof publicSpecifiers>[0];
  const rules: ConsumerRules = {
    library: 'oncely',
    publicSpecifiers: publicSpecifiers(library),
    browserSpecifiers: ['oncely/policy'],
  };
  /** The trees that use the library as a user does, and what each may import. */
  const TREES: Record<string, ConsumerTree> = {
    [`${CLI_SRC}/sim`]: { home: `${CLI_SRC}/sim`, browser: true },
    [CLI_SRC]: { home: CLI_SRC, browser: false },
    [WEB_SRC]: { home: WEB_SRC, browser: true },
    bench: { home: 'bench', browser: false },
    examples: { home: 'examples', browser: false },
  };
  const toy: ConsumerRules = {
    library: 'oncely',
    publicSpecifiers: ['oncely', 'oncely/http', 'oncely/policy'],
    browserSpecifiers: ['oncely/policy'],
  };
  const server: ConsumerTree = { home: 'packages/cli/src', browser: false };
  const page: ConsumerTree = { home: 'packages/cli/web/src', browser: true };

  it('the checker refuses internals, a path out of the tree, and node:* in a browser tree', () => {
    const check = (file: string, source: string, tree: ConsumerTree) =>
      checkConsumerImports(file, source, tree, toy).map((v) => v.why);
    assert.deepEqual(
      check('packages/cli/src/serve/a.ts', "import { x } from 'oncely/http';", server),
      [],
    );
    assert.deepEqual(
      check('packages/cli/src/serve/a.ts', "import { x } from '../lab/b.js';", server),
      [],
    );
    assert.match(
      check(
        'packages/cli/src/serve/a.ts',
        "import { x } from 'oncely/http/problem.js';",
        server,
      )[0] ?? '',
      /not an export/,
    );
    assert.match(
      check('bench/a.ts', "import { x } from '#oncely/ledger/ledger.js';", server)[0] ?? '',
      /internals/,
    );
    assert.match(
      check(
        'packages/cli/src/serve/a.ts',
        "import { x } from '../../../oncely/src/index.js';",
        server,
      )[0] ?? '',
      /only inside/,
    );
    assert.match(
      check('packages/cli/web/src/a.ts', "import { x } from 'node:fs';", page)[0] ?? '',
      /browser/,
    );
    assert.match(
      check('packages/cli/web/src/a.ts', "import { x } from 'oncely';", page)[0] ?? '',
      /browser-safe/,
    );
    assert.deepEqual(
      check('packages/cli/web/src/a.ts', "import { x } from 'oncely/policy';", page),
      [],
    );
  });

  it("reads the public specifiers from the library's package.json", () => {
    assert.ok(rules.publicSpecifiers.includes('oncely'));
    assert.ok(rules.publicSpecifiers.includes('oncely/stores/sqlite'));
    assert.ok(rules.publicSpecifiers.includes('oncely/policy'));
  });

  for (const [dir, tree] of Object.entries(TREES)) {
    it(`no file of ${dir} imports the library past its exports`, () => {
      const files = sourceFiles(repoPath(dir)).filter(
        (file) => dir !== CLI_SRC || !file.startsWith('sim/'),
      );
      assert.ok(files.length > 0, `${dir} has sources`);
      const violations = files.flatMap((file) =>
        checkConsumerImports(
          `${dir}/${file}`,
          readFileSync(repoPath(dir, file), 'utf8'),
          tree,
          rules,
        ),
      );
      assert.deepEqual(
        violations.map((v) => `${v.file}: ${v.specifier} (${v.why})`),
        [],
      );
    });
  }
});
