#!/usr/bin/env node
// Runs every compiled test file under dist/test with node's own test runner.
// Node 20 has no glob support in `node --test`, so we list the files ourselves.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const filter = process.argv[2];
// tsc never deletes output: a test whose source was moved or removed leaves a stale .js behind.
const hasSource = (file) => existsSync(file.replace(/^dist[\\/]/, '').replace(/\.js$/, '.ts'));
const files = findTests('dist/test')
  .filter(hasSource)
  .filter((file) => !filter || file.includes(filter))
  .sort();
if (files.length === 0) {
  console.error(`no test files found${filter ? ` matching ${filter}` : ''}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
