import type { Command } from 'commander';
import { InvalidOptionError, type EndpointPatch } from 'oncely';
import type { CliIo } from '../cli-io.js';
import {
  definedOnly,
  endpointSettingOptions,
  settingsFromFlags,
  type EndpointSettingFlags,
} from './endpoint-flags.js';
import { journalOptions, type JournalFlags, withJournal } from './journal-options.js';
import {
  subscriptionFromFlags,
  subscriptionOptions,
  type SubscriptionFlags,
} from './outbox-publish.js';
import { formatEndpointLine } from './outbox-endpoint.js';

interface UpdateFlags extends JournalFlags, SubscriptionFlags, EndpointSettingFlags {
  url?: string;
}

/** The flags given, as an endpoint patch: a flag not given leaves its field as it is. */
function patchFromFlags(flags: UpdateFlags): EndpointPatch {
  const patch = definedOnly({
    url: flags.url,
    ...settingsFromFlags(flags, true),
    ...subscriptionFromFlags(flags),
  });
  if (Object.keys(patch).length === 0)
    throw new InvalidOptionError(
      'update',
      '(no flag)',
      'at least one of --url, --rate, --breaker-*, --auto-disable-after, --event-type, --channel, --every-*',
    );
  return patch as EndpointPatch;
}

/** `oncely outbox endpoint update|delete|enable`: edits beside add, pause and resume. */
export function registerEndpointEdit(endpoint: Command, io: CliIo): void {
  journalOptions(
    endpointSettingOptions(
      subscriptionOptions(endpoint.command('update'), true)
        .description('edit an endpoint: the flags given change, the rest stays')
        .argument('<name>')
        .option('--url <url>', 'where its intents go from now on (pending ones included)'),
      true,
    ),
  ).action((id: string, flags: UpdateFlags) =>
    withJournal(flags, async (journal) => {
      const e = await journal.endpoints.update(id, patchFromFlags(flags));
      io.out(`updated: ${formatEndpointLine(e)}\n`);
    }),
  );
  journalOptions(
    endpoint
      .command('delete')
      .description('delete an endpoint; its pending intents are cancelled, with the reason')
      .argument('<name>')
      .option('--reason <text>', 'recorded on each cancelled intent'),
  ).action((id: string, flags: JournalFlags & { reason?: string }) =>
    withJournal(flags, async (journal) => {
      const { cancelled } = await journal.endpoints.delete(id, flags.reason);
      io.out(`deleted: ${id} (${cancelled} pending intent(s) cancelled)\n`);
    }),
  );
  journalOptions(
    endpoint
      .command('enable')
      .description('a disabled endpoint active again; its waiting intents are due now')
      .argument('<name>'),
  ).action((id: string, flags: JournalFlags) =>
    withJournal(flags, async (journal) => {
      io.out(`enabled: ${formatEndpointLine(await journal.endpoints.enable(id))}\n`);
    }),
  );
}
