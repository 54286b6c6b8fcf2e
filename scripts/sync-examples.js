#!/usr/bin/env node
// Copies each file of examples/ into the README and docs blocks that include it (the block right
// under `<!-- example: examples/NAME -->`), so the docs show exactly what the suite runs.
//   npm run build && node scripts/sync-examples.js          rewrite the blocks
//   node scripts/sync-examples.js --check                   exit 1 if a block differs
// The parser is test/support/doc-blocks.ts, compiled by the build.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docFiles, parseBlocks } from '../dist/test/support/doc-blocks.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
let stale = 0;
for (const doc of docFiles(root)) {
  const path = join(root, doc);
  let text = readFileSync(path, 'utf8');
  // From the last block back, so earlier offsets stay valid.
  for (const block of parseBlocks(root, doc).reverse()) {
    if (block.marker.kind !== 'example') continue;
    const source = readFileSync(join(root, block.marker.file), 'utf8');
    if (source === block.body) continue;
    stale++;
    console.log(
      `${doc}:${block.line}: ${check ? 'differs from' : 'copied from'} ${block.marker.file}`,
    );
    text = text.slice(0, block.bodyStart) + source + text.slice(block.bodyEnd);
  }
  if (!check) writeFileSync(path, text);
}
if (check && stale > 0) process.exit(1);
