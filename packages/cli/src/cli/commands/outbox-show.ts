import type { Command } from 'commander';
import { InvalidOptionError } from 'oncely';
import type { CliIo } from '../cli-io.js';
import { attemptEntryJson } from '../../outbox-ui/attempt-json.js';
import { formatIntentReport } from './format-intent.js';
import { journalOptions, type JournalFlags, withJournal } from './journal-options.js';
import { withoutBodies } from './outbox-list.js';

/** `oncely outbox show`. */
export function registerShow(outbox: Command, io: CliIo): void {
  const { out } = io;
  journalOptions(
    outbox
      .command('show')
      .description(
        "one intent's full report: payload, policy, every attempt with its response, the outcome",
      )
      .argument('<key>')
      .option('--json', "print JSON (the attempts' response bodies in base64 too)"),
  ).action((key: string, flags: JournalFlags & { json?: boolean }) =>
    withJournal(flags, async (journal) => {
      const report = await journal.report(key);
      if (!report) throw new InvalidOptionError('key', key, 'the key of an intent in this journal');
      if (flags.json) {
        const json = {
          ...withoutBodies(report.intent),
          attempts: report.attempts.map(attemptEntryJson),
        };
        return out(`${JSON.stringify(json, null, 2)}\n`);
      }
      out(formatIntentReport(report));
    }),
  );
}
