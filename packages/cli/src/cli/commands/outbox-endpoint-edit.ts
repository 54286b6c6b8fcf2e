import type { Command } from 'commander';
import { InvalidOptionError, type EndpointPatch } from 'oncely';
import type { CliIo } from '../cli-io.js';
import { parseDurationMs, parsePositiveInt } from './deliver-options.js';
import { journalOptions, type JournalFlags, withJournal } from './journal-options.js';
import {
  subscriptionFromFlags,
  subscriptionOptions,
  type SubscriptionFlags,
} from './outbox-publish.js';
import { formatEndpointLine } from './outbox-endpoint.js';

interface UpdateFlags extends JournalFlags, SubscriptionFlags {
  url?: string;
  rate?: string;
  breakerRatio?: string;
  breakerMin?: string;
  breakerWindow?: string;
  breakerCoolDown?: string;
  autoDisableAfter?: string;
}

function positiveNumber(option: string, text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new InvalidOptionError(option, text, 'a number > 0');
  return n;
}

/** The flags given, as an endpoint patch: a flag not given leaves its field as it is. */
function patchFromFlags(flags: UpdateFlags): EndpointPatch {
  const given = <T>(text: string | undefined, parse: (text: string) => T) =>
    text === undefined ? undefined : parse(text);
  const breaker = Object.fromEntries(
    Object.entries({
      failureRatio: given(flags.breakerRatio, (t) => positiveNumber('--breaker-ratio', t)),
      minRequests: given(flags.breakerMin, (t) => parsePositiveInt('--breaker-min', t)),
      windowMs: given(flags.breakerWindow, (t) => parseDurationMs('--breaker-window', t)),
      coolDownMs: given(flags.breakerCoolDown, (t) => parseDurationMs('--breaker-cool-down', t)),
    }).filter(([, value]) => value !== undefined),
  );
  const patch: Record<string, unknown> = {
    url: flags.url,
    // `none` lifts the limit.
    ratePerSecond: given(flags.rate, (t) => (t === 'none' ? null : positiveNumber('--rate', t))),
    autoDisableAfterMs: given(flags.autoDisableAfter, (t) =>
      parseDurationMs('--auto-disable-after', t),
    ),
    breaker: Object.keys(breaker).length > 0 ? breaker : undefined,
    ...subscriptionFromFlags(flags),
  };
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  if (Object.keys(defined).length === 0)
    throw new InvalidOptionError(
      'update',
      '(no flag)',
      'at least one of --url, --rate, --breaker-*, --auto-disable-after, --event-type, --channel, --every-*',
    );
  return defined as EndpointPatch;
}

/** `oncely outbox endpoint update|delete|enable`: edits beside add, pause and resume. */
export function registerEndpointEdit(endpoint: Command, io: CliIo): void {
  journalOptions(
    subscriptionOptions(endpoint.command('update'), true)
      .description('edit an endpoint: the flags given change, the rest stays')
      .argument('<name>')
      .option('--url <url>', 'where its intents go from now on (pending ones included)')
      .option('--rate <n>', 'messages per second across every worker, or none')
      .option('--breaker-ratio <r>', 'open the breaker at this failure ratio')
      .option('--breaker-min <n>', 'requests in a window before the breaker judges')
      .option('--breaker-window <duration>', "the breaker's window")
      .option('--breaker-cool-down <duration>', 'open this long before one probe')
      .option('--auto-disable-after <duration>', 'disable after only failures this long'),
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
