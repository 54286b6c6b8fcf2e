import type { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { InvalidOptionError, systemClock } from 'oncely';
import {
  DEFAULT_FLEET_SEEDS,
  FLEET_MODELS,
  fleetCells,
  fleetCsv,
  formatFleetTables,
  summarizeFleet,
  type FleetModel,
} from '../../sim/index.js';
import { formatClaims } from '../../lab/sim-tables.js';
import { processIo, type CliIo } from '../cli-io.js';
import { EXIT } from '../exit.js';
import { runFleetPool } from './fleet-pool.js';

interface FleetFlags {
  seeds?: string;
  firstSeed: string;
  workers?: string;
  json?: boolean;
  csv?: boolean;
  out?: string;
  check?: boolean;
}

/** `oncely sim fleet contention|dependency|overload|budget`: many clients, one server (docs/fleet.md). */
export function registerSimFleet(sim: Command, io: CliIo = processIo): void {
  sim
    .command('fleet')
    .description(
      'run a fleet model over its strategies and seeds; print means and its claims (docs/fleet.md)',
    )
    .argument('<model>', `one of ${FLEET_MODELS.join(', ')}`)
    .option(
      '--seeds <n>',
      `runs per cell (default: ${FLEET_MODELS.map((m) => `${m} ${DEFAULT_FLEET_SEEDS[m]}`).join(', ')})`,
    )
    .option('--first-seed <n>', 'first seed', '0')
    .option('--workers <n>', 'worker threads (default: the cores, at most 4)')
    .option('--json', 'print the summary (rows, claims) as JSON')
    .option('--csv', 'print one CSV line per cell')
    .option('--out <dir>', 'write summary.json and cells.csv there')
    .option('--check', `exit ${EXIT.checkFailed} when any claim is NOT REPRODUCED`)
    .addHelpText(
      'after',
      '\nModels:\n  contention  N clients race to update one row (Brooker 2015): write calls and time vs N\n' +
        '  dependency  a server failing with probability p (Brooker 2022): load and success vs p\n' +
        '  overload    a finite server after a 5 s outage: who recovers, who stays stuck\n' +
        '  budget      retry budgets per process vs one shared by the fleet (docs/client.md)\n\n' +
        'A progress bar shows on a terminal (stderr) only.\n\nExamples:\n  npx oncely sim fleet contention --check\n  npx oncely sim fleet dependency --seeds 2 --csv\n  npx oncely sim fleet budget --check',
    )
    .action(async (modelArg: string, flags: FleetFlags) => {
      if (!(FLEET_MODELS as readonly string[]).includes(modelArg)) {
        throw new InvalidOptionError('model', modelArg, `one of ${FLEET_MODELS.join(', ')}`);
      }
      const model = modelArg as FleetModel;
      const seeds =
        flags.seeds === undefined
          ? DEFAULT_FLEET_SEEDS[model]
          : integerFlag('--seeds', flags.seeds, 1, 100_000);
      const firstSeed = integerFlag('--first-seed', flags.firstSeed, 0, 0xffff_ffff - seeds + 1);
      const workers =
        flags.workers === undefined
          ? Math.min(4, availableParallelism())
          : integerFlag('--workers', flags.workers, 1, 64);
      const cells = fleetCells(model);
      const startedAt = systemClock.now();
      const bar = io.errIsTTY
        ? new cliProgress.SingleBar(
            {
              stream: process.stderr,
              clearOnComplete: true,
              format: `sim fleet ${model} [{bar}] {value}/{total} cells, {eta}s left`,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      bar?.start(cells.length, 0);
      const results = await runFleetPool(cells, {
        seeds,
        firstSeed,
        workers,
        ...(bar ? { onProgress: (done: number) => bar.update(done) } : {}),
      });
      bar?.stop();
      const summary = summarizeFleet(model, results);
      if (flags.out !== undefined) {
        mkdirSync(flags.out, { recursive: true });
        writeFileSync(join(flags.out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
        writeFileSync(join(flags.out, 'cells.csv'), fleetCsv(summary));
      }
      if (flags.json === true) {
        io.out(`${JSON.stringify(summary, null, 2)}\n`);
      } else if (flags.csv === true) {
        io.out(fleetCsv(summary));
      } else {
        const seconds = ((systemClock.now() - startedAt) / 1000).toFixed(2);
        const lines = [
          `oncely sim fleet ${model}: ${cells.length} cells x ${seeds} seeds = ${cells.length * seeds} runs on ${workers} worker${workers === 1 ? '' : 's'} (${seconds} s)`,
          '',
          formatFleetTables(summary),
          '',
          'Claims',
          formatClaims(summary.claims),
        ];
        if (flags.out !== undefined)
          lines.push('', `Wrote summary.json and cells.csv to ${flags.out}`);
        io.out(`${lines.join('\n')}\n`);
      }
      if (flags.check === true && summary.claims.some((claim) => !claim.reproduced))
        io.exit(EXIT.checkFailed);
    });
}

function integerFlag(flag: string, raw: string, min: number, max: number): number {
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new InvalidOptionError(flag, raw, `an integer from ${min} to ${max}`);
  return value;
}
