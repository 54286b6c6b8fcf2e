import type { Command } from 'commander';
import { OncelyError, type EndpointPatch } from 'oncely';
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

/**
 * The flags given, as an endpoint patch: a flag not given leaves its field as it is. None given
 * is bad input, told in one line that names the flags `changeFlags` (the command's own).
 */
function patchFromFlags(
  id: string,
  flags: UpdateFlags,
  changeFlags: readonly string[],
): EndpointPatch {
  const patch = definedOnly({
    url: flags.url,
    ...settingsFromFlags(flags, true),
    ...subscriptionFromFlags(flags),
  });
  if (Object.keys(patch).length === 0)
    throw new OncelyError(
      'invalid_option',
      `endpoint update ${id}: nothing to change; give one or more of ${changeFlags.join(', ')}`,
    );
  return patch as EndpointPatch;
}

/** `oncely outbox endpoint update|delete|enable`: edits beside add, pause and resume. */
export function registerEndpointEdit(endpoint: Command, io: CliIo): void {
  const update = subscriptionOptions(
    endpointSettingOptions(
      endpoint
        .command('update')
        .description('edit an endpoint: the flags given change, the rest stays')
        .argument('<name>')
        .option('--url <url>', 'where its intents go from now on (pending ones included)'),
      true,
    ),
    true,
  );
  // Taken before journalOptions adds the flags that say where, not what to change.
  const changeFlags = update.options.map((option) => option.long ?? option.flags);
  journalOptions(update).action((id: string, flags: UpdateFlags) =>
    withJournal(flags, async (journal) => {
      const e = await journal.endpoints.update(id, patchFromFlags(id, flags, changeFlags));
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
