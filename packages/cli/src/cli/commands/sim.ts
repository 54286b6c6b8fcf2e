import type { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { systemClock } from 'oncely';
import {
  BATCH_SETTINGS,
  BATCH_SETTING_IDS,
  DEFAULT_BATCH,
  DEFAULT_WORLD_PARAMS,
  RULES,
  drawsFor,
  ruleById,
  runBatch,
  runWorld,
  type RunBatchOptions,
} from '../../sim/index.js';
import { batchFiles, summarizeBatch } from '../../sim/batch-summary.js';
import {
  formatClaims,
  formatMeansTables,
  formatParams,
  formatRunTable,
  formatPublishedComparison,
  formatTraceText,
} from '../../lab/sim-tables.js';
import { EXIT } from '../exit.js';
import { processIo, type CliIo } from '../cli-io.js';
import { registerSimFleet } from './sim-fleet.js';
import { integerFlag, rulesOption, WORLD_FLAGS, worldParamsFrom } from './sim-flags.js';

/** `oncely sim …`: the seeded simulator of the simulator write-up (docs/origins.md). */
export function registerSim(program: Command, io: CliIo = processIo): void {
  const sim = program
    .command('sim')
    .description('compare retry rules on seeded lossy worlds (docs/origins.md, docs/simulator.md)');
  registerSimRun(sim, io);
  registerSimBatch(sim, io);
  registerSimFleet(sim, io);
}

function registerSimRun(sim: Command, io: CliIo): void {
  const run = sim
    .command('run')
    .description('simulate one world under each rule and print its metrics (and trace)')
    .option(
      '--rules <ids>',
      `rules to run, comma-separated: ${RULES.map((r) => r.id).join(', ')}, or all (default: all)`,
    )
    .option('--policy <ids>', 'the older name of --rules, still accepted')
    .option(
      '--setting <id>',
      `start from a batch setting: ${BATCH_SETTING_IDS.join(', ')}`,
      'default',
    );
  for (const flag of WORLD_FLAGS) {
    const fallback = DEFAULT_WORLD_PARAMS[flag.param];
    run.option(flag.flags, `${flag.help} (default: ${fallback === null ? flag.none : fallback})`);
  }
  run
    .option(
      '--trace',
      'print every event: send, request-lost, effect, suppressed, receipt-sent, receipt-lost, confirmed',
    )
    .option('--json', 'print params and per-rule metrics (and traces) as JSON')
    .addHelpText(
      'after',
      '\nWorld flags override the values of --setting; the defaults shown are the default channel.\n\nExamples:\n  npx oncely sim run --seed 7 --rules retry-key --retention 8 --trace\n  npx oncely sim run --setting credits-24 --json',
    )
    .action((options: Record<string, string | boolean | undefined>) => {
      const params = worldParamsFrom(options);
      const rules = rulesOption(options);
      const draws = drawsFor(params);
      const trace = options['trace'] === true;
      const outcomes = rules.map((rule) => runWorld(params, rule, { trace, draws }));
      if (options['json'] === true) {
        const shaped = outcomes.map((o) => ({
          rule: o.rule,
          label: ruleById(o.rule)!.label,
          metrics: o.metrics,
          ...(o.trace ? { trace: o.trace } : {}),
        }));
        io.out(`${JSON.stringify({ params, outcomes: shaped }, null, 2)}\n`);
        return;
      }
      const parts = [formatParams(params), '', formatRunTable(outcomes)];
      if (trace)
        for (const o of outcomes) parts.push('', `${ruleById(o.rule)!.label}:`, formatTraceText(o));
      io.out(`${parts.join('\n')}\n`);
    });
}

function registerSimBatch(sim: Command, io: CliIo): void {
  sim
    .command('batch')
    .description(
      'run the ten predeclared settings over many seeds; print means, the published ones beside them, and the claims',
    )
    .option('--seeds <n>', 'worlds per setting: seeds 0 … n − 1', String(DEFAULT_BATCH.seeds))
    .option('--out <dir>', 'write outcomes.jsonl, outcomes.csv, means.csv and summary.json there')
    .option('--json', 'print the summary (means, comparison, claims) as JSON')
    .option('--check', `exit ${EXIT.checkFailed} when any claim is NOT REPRODUCED`)
    .addHelpText(
      'after',
      `\nSettings: ${BATCH_SETTINGS.map((s) => s.id).join(', ')}.\nA progress bar shows on a terminal (stderr) only.`,
    )
    .action((options: { seeds: string; out?: string; json?: boolean; check?: boolean }) => {
      const seeds = integerFlag('--seeds', options.seeds, 1, 1_000_000);
      const startedAt = systemClock.now();
      const bar = io.errIsTTY
        ? new cliProgress.SingleBar(
            {
              stream: process.stderr,
              clearOnComplete: true,
              format: 'sim batch [{bar}] {value}/{total} worlds',
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      const batchOptions: RunBatchOptions = { seeds, keepOutcomes: options.out !== undefined };
      bar?.start(seeds * BATCH_SETTINGS.length, 0);
      const result = runBatch(
        bar ? { ...batchOptions, onProgress: (done) => bar.update(done) } : batchOptions,
      );
      bar?.stop();
      const summary = summarizeBatch(result);
      if (options.out !== undefined) {
        mkdirSync(options.out, { recursive: true });
        for (const [name, text] of Object.entries(batchFiles(result, summary)))
          writeFileSync(join(options.out, name), text);
      }
      if (options.json === true) {
        io.out(`${JSON.stringify(summary, null, 2)}\n`);
      } else {
        const seconds = ((systemClock.now() - startedAt) / 1000).toFixed(2);
        const lines = [
          `oncely sim batch: ${result.settings.length} settings x ${seeds} seeds = ${result.worlds} worlds, ${result.rules.length} rules, ${result.outcomeCount} outcomes (${seconds} s)`,
          '',
          `Means over seeds 0-${seeds - 1}`,
          '',
          formatMeansTables(result.means),
          '',
          `The published means (docs/origins.md) beside ours (|z| < 2 is sampling noise)`,
          formatPublishedComparison(summary.published),
          '',
          'Claims',
          formatClaims(summary.claims),
        ];
        if (options.out !== undefined)
          lines.push(
            '',
            `Wrote outcomes.jsonl, outcomes.csv, means.csv and summary.json to ${options.out}`,
          );
        io.out(`${lines.join('\n')}\n`);
      }
      if (options.check === true && summary.claims.some((claim) => !claim.reproduced))
        io.exit(EXIT.checkFailed);
    });
}
