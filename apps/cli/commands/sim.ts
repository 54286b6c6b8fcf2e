import type { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { InvalidOptionError, isInvalidOptionError, systemClock } from '../../../src/index.js';
import {
  BATCH_SETTINGS,
  BATCH_SETTING_IDS,
  DEFAULT_BATCH,
  DEFAULT_WORLD_PARAMS,
  RULES,
  batchSettingById,
  drawsFor,
  resolveWorldParams,
  ruleById,
  runBatch,
  runWorld,
  type Rule,
  type RunBatchOptions,
  type WorldParams,
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

/** A world parameter on the command line. `none` is the word that means null (no limit, never). */
interface WorldFlag {
  readonly param: keyof WorldParams;
  readonly flags: string;
  /** Commander's attribute name for the flag. */
  readonly key: string;
  readonly help: string;
  readonly none?: string;
}

const WORLD_FLAGS: readonly WorldFlag[] = [
  { param: 'seed', flags: '--seed <n>', key: 'seed', help: 'which world (0 to 4294967295)' },
  { param: 'jobs', flags: '--jobs <n>', key: 'jobs', help: 'jobs to deliver' },
  {
    param: 'horizonTicks',
    flags: '--horizon <ticks>',
    key: 'horizon',
    help: 'dispatch at ticks 0 … horizon − 1',
  },
  {
    param: 'sendsPerTick',
    flags: '--sends-per-tick <n>',
    key: 'sendsPerTick',
    help: 'sends per tick, at most',
  },
  { param: 'credits', flags: '--credits <n>', key: 'credits', help: 'credit ceiling on all sends' },
  {
    param: 'sendCost',
    flags: '--send-cost <n>',
    key: 'sendCost',
    help: 'credits per send without a key',
  },
  {
    param: 'keyedSendCost',
    flags: '--keyed-send-cost <n>',
    key: 'keyedSendCost',
    help: 'credits per keyed send',
  },
  {
    param: 'requestLoss',
    flags: '--request-loss <p>',
    key: 'requestLoss',
    help: 'probability a request is lost',
  },
  {
    param: 'receiptLoss',
    flags: '--receipt-loss <p>',
    key: 'receiptLoss',
    help: 'probability a receipt is lost',
  },
  {
    param: 'maxDelayTicks',
    flags: '--max-delay <ticks>',
    key: 'maxDelay',
    help: 'each leg takes 1 … this many ticks',
  },
  {
    param: 'retryAfterTicks',
    flags: '--retry-after <ticks>',
    key: 'retryAfter',
    help: 'ticks since the last send before a retry',
  },
  {
    param: 'maxRetryAfterTicks',
    flags: '--max-retry-after <ticks>',
    key: 'maxRetryAfter',
    help: 'cap on the backoff and learned retry-afters',
  },
  {
    param: 'maxAttempts',
    flags: '--max-attempts <n|none>',
    key: 'maxAttempts',
    help: 'attempts per job',
    none: 'none',
  },
  {
    param: 'retentionTicks',
    flags: '--retention <ticks|run>',
    key: 'retention',
    help: 'key retention',
    none: 'run',
  },
  {
    param: 'forgetKeysAt',
    flags: '--forget-at <tick|never>',
    key: 'forgetAt',
    help: 'clear the receiver ledger at this tick',
    none: 'never',
  },
];

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

/** The world of `--setting` with each given flag on top, validated; errors name the flag. */
function worldParamsFrom(options: Record<string, string | boolean | undefined>): WorldParams {
  const settingId = String(options['setting']);
  const setting = batchSettingById(settingId);
  if (!setting)
    throw new InvalidOptionError('--setting', settingId, `one of ${BATCH_SETTING_IDS.join(', ')}`);
  const given: Record<string, number | null> = {};
  for (const flag of WORLD_FLAGS) {
    const raw = options[flag.key];
    if (typeof raw !== 'string') continue;
    given[flag.param] = flag.none !== undefined && raw === flag.none ? null : numberFlag(raw);
  }
  try {
    return resolveWorldParams({ ...setting.overrides, ...given });
  } catch (error) {
    if (!isInvalidOptionError(error)) throw error;
    const flag = WORLD_FLAGS.find((f) => f.param === error.option);
    if (!flag) throw error;
    const raw = options[flag.key];
    const allowed =
      flag.none === undefined ? error.allowed : error.allowed.replace('null', flag.none);
    throw new InvalidOptionError(flag.flags.split(' ')[0]!, raw ?? error.value, allowed);
  }
}

/** A decimal number, or NaN (which validation then rejects, naming the flag). */
function numberFlag(raw: string): number {
  return /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(raw) ? Number(raw) : Number.NaN;
}

function integerFlag(flag: string, raw: string, min: number, max: number): number {
  const value = numberFlag(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new InvalidOptionError(flag, raw, `an integer from ${min} to ${max}`);
  return value;
}

/** The rules of `--rules`, or of `--policy`, its older name; both given must name the same list. */
function rulesOption(options: Record<string, string | boolean | undefined>): Rule[] {
  const rules = options['rules'];
  const policy = options['policy'];
  if (typeof rules === 'string' && typeof policy === 'string' && rules !== policy)
    throw new InvalidOptionError(
      '--policy',
      policy,
      `the same list as --rules (${rules}), or nothing: --policy is the older name of --rules`,
    );
  if (typeof rules === 'string') return rulesFrom('--rules', rules);
  if (typeof policy === 'string') return rulesFrom('--policy', policy);
  return [...RULES];
}

function rulesFrom(flag: string, list: string): Rule[] {
  if (list.trim() === 'all') return [...RULES];
  return list.split(',').map((id) => {
    const rule = ruleById(id.trim());
    if (!rule)
      throw new InvalidOptionError(
        flag,
        id.trim(),
        `one of ${RULES.map((r) => r.id).join(', ')}, or all`,
      );
    return rule;
  });
}
