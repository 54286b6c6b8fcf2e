import type { Command } from 'commander';
import { type IntentRecord, systemClock } from 'oncely';
import type { CliIo } from '../cli-io.js';
import { attemptEntryJson } from '../../outbox-ui/attempt-json.js';
import { parsePositiveInt } from './deliver-options.js';
import { formatAttemptEntry, formatIntentLine } from './format-intent.js';
import { filterOptions, parseFilterFlags, type FilterFlags } from './intent-filter-flags.js';
import { journalOptions, type JournalFlags, withJournal } from './journal-options.js';
import { formatCounts } from './outbox-run.js';

interface ListFlags extends JournalFlags, FilterFlags {
  limit?: string;
  after?: string;
  attempts?: boolean;
  json?: boolean;
}

/** `oncely outbox list`: the intents, newest first, narrowed by the filter flags, a page at a time. */
export function registerOutboxList(outbox: Command, io: CliIo): void {
  const { out } = io;
  journalOptions(
    filterOptions(
      outbox
        .command('list')
        .description('list intents, newest first, with their state and attempts')
        .option('--limit <n>', 'at most this many (default: 100)')
        .option('--after <key>', 'the next page: the intents recorded before this key')
        .option('--attempts', "each intent's attempts under it (times, statuses, errors)")
        .option('--json', 'print JSON'),
    ),
  ).action((flags: ListFlags) =>
    withJournal(flags, async (journal) => {
      const limit = flags.limit === undefined ? 100 : parsePositiveInt('--limit', flags.limit);
      const intents = await journal.list({
        ...parseFilterFlags(flags, systemClock.now()),
        limit,
        ...(flags.after === undefined ? {} : { after: flags.after }),
      });
      if (flags.json) {
        // --attempts adds each intent's attempts, in JSON as in text (it used to leave them out).
        const rows = await Promise.all(
          intents.map(async (intent) =>
            flags.attempts
              ? {
                  ...withoutBodies(intent),
                  attempts: (await journal.store.attempts(intent.key)).map(attemptEntryJson),
                }
              : withoutBodies(intent),
          ),
        );
        return out(`${JSON.stringify(rows, null, 2)}\n`);
      }
      for (const intent of intents) {
        out(`${formatIntentLine(intent)}\n`);
        if (flags.attempts)
          for (const attempt of await journal.store.attempts(intent.key))
            out(`    ${formatAttemptEntry(attempt, intent.createdAt)}\n`);
      }
      if (intents.length === limit) out(`more: --after ${intents[intents.length - 1]!.key}\n`);
      out(`${formatCounts(await journal.counts())}\n`);
    }),
  );
}

/** An intent as JSON output shows it: without the payload and the receipt's bytes. */
type IntentWithoutBodies = Omit<IntentRecord, 'body' | 'outcome'> & {
  readonly outcome:
    | (Omit<NonNullable<IntentRecord['outcome']>, 'body'> & { body: undefined })
    | null;
};

/** An intent for JSON output: the payload and receipt bytes left out (`outbox show` has them). */
export function withoutBodies({
  body: _body,
  outcome,
  ...rest
}: IntentRecord): IntentWithoutBodies {
  return { ...rest, outcome: outcome && { ...outcome, body: undefined } };
}
