/**
 * `npm run bench`: every benchmark, one after the other, each in its own process so one's heap
 * and JIT state do not colour the next. Each prints its own table and ratios. Arguments after
 * `--` go to every benchmark (e.g. `npm run bench -- --rounds 3`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SHARED_ARGS_ENV } from './bench-args.js';

const BENCHMARKS = [
  'client',
  'ledger',
  'middleware-cost',
  'anchors',
  'orm',
  'outbox',
  'replay',
  'lock-wait',
  'journal-wake',
  'sim',
] as const;

if (process.argv.includes('--help')) {
  console.log(`usage: npm run bench [-- options]
  runs bench/${BENCHMARKS.join(', bench/')} one after the other, each in its own process; the
  options go to every one of them, and each skips those it does not take
  (node dist/bench/<name>.js --help lists a benchmark's own)`);
  process.exit(0);
}

let failed = 0;
for (const name of BENCHMARKS) {
  const file = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  if (!existsSync(file)) {
    console.log(`\n## bench/${name}: not built (${file} is missing)`);
    failed++;
    continue;
  }
  console.log(`\n## bench/${name}`);
  const result = spawnSync(process.execPath, [file, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, [SHARED_ARGS_ENV]: '1' },
  });
  if (result.status !== 0) failed++;
}
process.exitCode = failed === 0 ? 0 : 1;
