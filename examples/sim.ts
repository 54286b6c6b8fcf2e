import { checkClaims, meansTable, runBatch, runWorld } from '@oncely/cli/sim/index.js';

const outcome = runWorld({ seed: 3, credits: 24 }, 'retry-key'); // metrics + trace
console.log(outcome.metrics, `${outcome.trace?.length} events`);
// A web worker would post onProgress onwards; here it is a counter on stderr.
const batch = runBatch({
  seeds: 8,
  onProgress: (done, total) => process.stderr.write(`\r${done}/${total}`),
});
const rows = meansTable(batch.outcomes); // = batch.means
for (const claim of checkClaims(rows)) console.log(claim.reproduced ? 'yes' : 'NO ', claim.text);
