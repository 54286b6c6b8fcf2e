import type { Command } from 'commander';
import { InvalidOptionError } from 'oncely';
import type { CliIo } from '../cli-io.js';
import { collect, journalOptions, type JournalFlags, withJournal } from './journal-options.js';

interface PublishFlags extends JournalFlags {
  type: string;
  data: string;
  id?: string;
  channel?: string[];
}

/** The `data` of a message: JSON, refused with the parser's reason when it is not. */
function parseData(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new InvalidOptionError('--data', text, `JSON (${(error as Error).message})`);
  }
}

/** `oncely outbox publish`: one message, one intent per endpoint subscribed to its type. */
export function registerOutboxPublish(outbox: Command, io: CliIo): void {
  journalOptions(
    outbox
      .command('publish')
      .description(
        'publish an event: one intent for each endpoint subscribed to its type (and channel)',
      )
      .requiredOption('-t, --type <type>', 'the event type, e.g. order.created')
      .requiredOption('-d, --data <json>', "the event's data, as JSON")
      .option('--id <id>', 'the message id; publishing it again adds nothing (default: fresh)')
      .option('--channel <name>', 'a tag endpoints may subscribe to (repeatable)', collect)
      .addHelpText(
        'after',
        `\nExamples:\n  npx oncely outbox endpoint add shop https://shop.test/hooks --event-type 'order.*'\n  npx oncely outbox publish --type order.created --data '{"id":"o-1"}'`,
      ),
  ).action((flags: PublishFlags) =>
    withJournal(flags, async (journal) => {
      const result = await journal.publish({
        type: flags.type,
        data: parseData(flags.data),
        ...(flags.id === undefined ? {} : { id: flags.id }),
        ...(flags.channel === undefined ? {} : { channels: flags.channel }),
      });
      const to =
        result.endpoints.length === 0 ? 'no endpoint subscribed' : result.endpoints.join(', ');
      io.out(`published ${result.id} to ${to} (${result.created} intent(s) recorded)\n`);
    }),
  );
}

/** The subscription flags of `endpoint add` and `endpoint update`. */
export interface SubscriptionFlags {
  eventType?: string[];
  channel?: string[];
  everyEvent?: boolean;
  everyChannel?: boolean;
}

/** Adds `--event-type`, `--channel` (and, for an edit, `--every-event`, `--every-channel`). */
export function subscriptionOptions(command: Command, edit: boolean): Command {
  command
    .option(
      '--event-type <type>',
      'published events it gets: order.created, order.*, * (repeatable; default: every type)',
      collect,
    )
    .option(
      '--channel <name>',
      'only published events tagged with one of these (repeatable; default: every event)',
      collect,
    );
  if (edit)
    command
      .option('--every-event', 'get every event type again')
      .option('--every-channel', 'get events whatever their channel again');
  return command;
}

/** The subscription fields the flags give; undefined fields stay as they are. */
export function subscriptionFromFlags(flags: SubscriptionFlags): {
  eventTypes?: readonly string[] | null;
  channels?: readonly string[] | null;
} {
  if (flags.everyEvent && flags.eventType !== undefined)
    throw new InvalidOptionError('--every-event', true, 'not with --event-type');
  if (flags.everyChannel && flags.channel !== undefined)
    throw new InvalidOptionError('--every-channel', true, 'not with --channel');
  return {
    ...(flags.everyEvent ? { eventTypes: null } : {}),
    ...(flags.eventType === undefined ? {} : { eventTypes: flags.eventType }),
    ...(flags.everyChannel ? { channels: null } : {}),
    ...(flags.channel === undefined ? {} : { channels: flags.channel }),
  };
}
