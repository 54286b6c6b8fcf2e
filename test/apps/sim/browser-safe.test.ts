import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from 'esbuild';
import { CLI_SRC, REPO_ROOT, repoPath } from '../../support/repo-path.js';

test("the simulator bundles for the browser and reaches only the library's pure layers", async () => {
  const result = await build({
    entryPoints: [repoPath(CLI_SRC, 'sim', 'index.ts')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: REPO_ROOT,
  });
  const inputs = Object.keys(result.metafile.inputs);
  assert.ok(inputs.length > 5);
  for (const input of inputs)
    assert.match(
      input,
      /^(packages\/cli\/src\/sim|packages\/oncely\/dist\/(time|policy|contract))\//,
      `${input} is outside the pure layers`,
    );
  const code = result.outputFiles[0]!.text;
  // Only the library's time/ may read real time or platform randomness, and the simulator must not reach it.
  assert.doesNotMatch(code, /Date\.now|Math\.random|setTimeout|performance\.now/);
});
