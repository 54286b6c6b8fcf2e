import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import {
  DEAD_STATES,
  InvalidOptionError,
  OncelyError,
  type Journal,
  type ReplayResult,
  systemClock,
} from 'oncely';
import type { CliIo } from '../cli-io.js';
import { parsePolicyFlags } from './deliver-options.js';
import { formatIntentLine } from './format-intent.js';
import { filterOptions, parseFilterFlags, type FilterFlags } from './intent-filter-flags.js';
import { journalOptions, type JournalFlags, withJournal } from './journal-options.js';

interface ReplayFlags extends JournalFlags, FilterFlags {
  all?: boolean;
  dryRun?: boolean;
  maxAttempts?: string;
  deadline?: string;
}

const HELP = `
Replay makes dead intents pending again under their own keys, with a fresh budget (their own
max attempts again, counted after the attempts made; no deadline unless --deadline); the next
\`oncely outbox run\` sends them. Every attempt made before stays in \`outbox show\`.
Without --state it takes the dead letters: ${DEAD_STATES.join(', ')}; cancelled only with --state cancelled.
An unknown intent may have done its work: the replay sends it again under the same key, and a
receiver with an idempotency ledger answers from its receipt while it still keeps that key.
Past the receiver's retention, a replay of an unknown intent may do the work twice.

Examples:
  npx oncely outbox replay order-7
  npx oncely outbox replay --since 2026-12-01T00:00Z --dry-run
  npx oncely outbox replay --target-prefix https://api.example.com/ --state refused`;

/** `oncely outbox replay`: one dead intent by key, or every one a filter selects. */
export function registerOutboxReplay(outbox: Command, io: CliIo): void {
  journalOptions(
    filterOptions(
      outbox
        .command('replay')
        .description(
          'send dead intents again under their own keys: one by KEY, or all a filter selects',
        )
        .argument('[key]', 'the one intent to replay')
        .option(
          '--all',
          'every dead letter, unfiltered (a filter flag or a KEY is otherwise needed)',
        )
        .option('--dry-run', 'list what would be reopened; change nothing')
        .option('-n, --max-attempts <n>', 'more attempts for each (default: its own budget again)')
        .option('--deadline <when>', 'a new deadline: a duration (30s) or an ISO instant'),
      'refused, gave_up, unknown, cancelled (default: the first three)',
    ),
  )
    .addHelpText('after', HELP)
    .action((key: string | undefined, flags: ReplayFlags) =>
      withJournal(flags, async (journal) => {
        const now = systemClock.now();
        const filter = parseFilterFlags(flags, now);
        const policy = parsePolicyFlags(flags, now);
        const narrowed = Object.keys(filter).length > 0;
        if (key !== undefined && (narrowed || flags.all))
          throw usage(`give a KEY or filter flags, not both (got ${key} and a filter)`);
        if (key === undefined && !narrowed && !flags.all)
          throw usage(
            'name a KEY, a filter (--since, --target, --target-prefix, --endpoint, --state, --dead), or --all for every dead letter',
          );
        const result =
          key === undefined
            ? await journal.replay(filter, {
                ...policy,
                dryRun: flags.dryRun,
                onProgress: progress(io),
              })
            : await replayOne(journal, key, policy, flags.dryRun === true);
        printResult(io, result, flags.dryRun === true);
      }),
    );
}

/** A usage error: one line, exit 2, like commander's own. */
const usage = (message: string): OncelyError =>
  new OncelyError('invalid_option', `outbox replay: ${message}`);

/** One key: `retry`, or on a dry run the same checks without the write. */
async function replayOne(
  journal: Journal<unknown>,
  key: string,
  policy: { maxAttempts?: number; deadlineAt?: number },
  dryRun: boolean,
): Promise<ReplayResult> {
  if (!dryRun) {
    const was = await journal.get(key); // printed as it was, like a filtered replay's
    await journal.retry(key, policy); // refuses an unknown key or a live intent
    return { selected: [was!], reopened: [key], skipped: [] };
  }
  const intent = await journal.get(key);
  if (!intent) throw new InvalidOptionError('key', key, 'the key of an intent in this journal');
  if (intent.state === 'pending' || intent.state === 'delivered')
    throw new InvalidOptionError('key', key, `a dead intent (this one is ${intent.state})`);
  return { selected: [intent], reopened: [], skipped: [] };
}

/** A progress bar on a terminal while many intents are reopened; nothing otherwise. */
function progress(io: CliIo): ((done: number, total: number) => void) | undefined {
  if (!io.errIsTTY) return undefined;
  let bar: cliProgress.SingleBar | undefined;
  return (done, total) => {
    if (total < 20) return;
    if (!bar) {
      bar = new cliProgress.SingleBar(
        {
          stream: process.stderr,
          clearOnComplete: true,
          format: 'replay [{bar}] {value}/{total} intents reopened',
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0);
    }
    bar.update(done);
    if (done === total) bar.stop();
  };
}

function printResult(io: CliIo, result: ReplayResult, dryRun: boolean): void {
  const reopened = new Set(result.reopened);
  for (const intent of result.selected) {
    const verb = dryRun ? 'would reopen' : reopened.has(intent.key) ? 'reopened' : 'skipped';
    io.out(`${verb}: ${formatIntentLine(intent)}\n`);
  }
  io.out(
    dryRun
      ? `replay (dry run): ${result.selected.length} would be reopened, nothing changed\n`
      : `replay: ${result.reopened.length} reopened${result.skipped.length > 0 ? `, ${result.skipped.length} skipped (replayed meanwhile)` : ''}; \`oncely outbox run\` sends them\n`,
  );
}
