import type { Command } from 'commander';
import {
  checkSigningKey,
  DEFAULT_OUTBOX_POLICY,
  EndpointStateError,
  generateWebhookSecret,
  InvalidOptionError,
  type DisabledNotice,
  type EndpointRecord,
  systemClock,
} from 'oncely';
import type { CliIo } from '../cli-io.js';
import { checkEndpointByDryRun } from '../../shared/scratch-journal.js';
import { registerEndpointEdit } from './outbox-endpoint-edit.js';
import { parseDurationMs, parsePositiveInt } from './deliver-options.js';
import {
  endpointSettingOptions,
  settingsFromFlags,
  type EndpointSettingFlags,
} from './endpoint-flags.js';
import {
  subscriptionFromFlags,
  subscriptionOptions,
  type SubscriptionFlags,
} from './outbox-publish.js';
import {
  journalOptions,
  secretFromEnv,
  type JournalFlags,
  withJournal,
} from './journal-options.js';
import {
  OUTBOX_RETRY_HELP,
  parseRetryFlags,
  retryOptions,
  type RetryFlags,
} from './retry-flags.js';
import { signingKeysFromEnv } from './webhook-key-flags.js';
import { showOnce } from './shown-once.js';

interface AddFlags extends JournalFlags, RetryFlags, SubscriptionFlags, EndpointSettingFlags {
  maxAttempts?: string;
  secretEnv?: string;
}

/** One endpoint on one line: name, state, breaker, rate, URL, why it is not active. */
export function formatEndpointLine(e: EndpointRecord, nowMs = systemClock.now()): string {
  const rate = e.settings.ratePerSecond === null ? 'no limit' : `${e.settings.ratePerSecond}/s`;
  const slowed = e.health.slowUntil > nowMs ? ' slowed' : '';
  // The instant its intents' next attempts show too (a Retry-After holds both to one instant).
  const deferred =
    e.health.deferredUntil > nowMs
      ? ` held until ${new Date(e.health.deferredUntil).toISOString()}`
      : '';
  const reason = e.stateReason === null ? '' : `  (${e.stateReason})`;
  return `${e.id.padEnd(16)} ${e.state.padEnd(8)} breaker ${e.health.breaker.padEnd(9)} ${rate}${slowed}${deferred}  ${e.url}${reason}`;
}

/** `--notify-disabled URL` or `--notify-disabled endpoint:NAME`. */
export function parseDisabledNotice(text: string | undefined): DisabledNotice | undefined {
  if (text === undefined) return undefined;
  if (text.startsWith('endpoint:')) return { endpoint: text.slice('endpoint:'.length) };
  try {
    if (/^https?:$/.test(new URL(text).protocol)) return { target: text };
  } catch {
    // reported below
  }
  throw new InvalidOptionError('--notify-disabled', text, 'an http(s) URL or endpoint:NAME');
}

/** `oncely outbox endpoint …`: the receivers intents may name. */
export function registerOutboxEndpoint(outbox: Command, io: CliIo): void {
  const endpoint = outbox
    .command('endpoint')
    .description(
      'endpoints: receivers with their own state, throttle, circuit breaker and signing secrets',
    );
  registerAdd(endpoint, io);
  journalOptions(endpoint.command('list').description('list endpoints and their state'))
    .option('--json', 'print JSON (secrets left out)')
    .action((flags: JournalFlags & { json?: boolean }) =>
      withJournal(flags, async (journal) => {
        const all = await journal.endpoints.list();
        if (flags.json)
          return io.out(
            `${JSON.stringify(
              all.map(({ secrets, ...rest }) => ({ ...rest, secrets: secrets.length })),
              null,
              2,
            )}\n`,
          );
        io.out(all.map((e) => `${formatEndpointLine(e)}\n`).join(''));
      }),
    );
  for (const [name, verb, help] of [
    ['pause', 'paused', 'its intents wait, unsent and with their budget intact, until resume'],
    [
      'disable',
      'disabled',
      'stopped: its intents wait until `enable` (as the receiver signals do)',
    ],
  ] as const)
    journalOptions(endpoint.command(name).description(help).argument('<name>'))
      .option('--reason <text>', 'why, shown in endpoint list')
      .action((id: string, flags: JournalFlags & { reason?: string }) =>
        withJournal(flags, async (journal) => {
          const e = await journal.endpoints[name](id, flags.reason);
          io.out(`${verb}: ${formatEndpointLine(e)}\n`);
        }),
      );
  journalOptions(
    endpoint
      .command('resume')
      .description('a paused endpoint active again, breaker closed; its intents are due now')
      .argument('<name>'),
  ).action((id: string, flags: JournalFlags) =>
    withJournal(flags, async (journal) => {
      io.out(`resumed: ${formatEndpointLine(await journal.endpoints.resume(id))}\n`);
    }),
  );
  registerRotate(endpoint, io);
  registerEndpointEdit(endpoint, io);
}

function registerAdd(endpoint: Command, io: CliIo): void {
  journalOptions(
    retryOptions(
      endpointSettingOptions(
        subscriptionOptions(endpoint.command('add'), false)
          .description('add an endpoint; intents name it with `outbox add --endpoint NAME`')
          .argument('<name>', 'letters, digits, . _ -')
          .argument('<url>', 'where its intents are sent'),
        false,
      )
        .option(
          '--secret-env <VAR>',
          'its signing keys (whsec_ or whsk_), space-separated, from this variable (default: a fresh whsec_ secret, printed once)',
        )
        .option(
          '-n, --max-attempts <n>',
          `its intents' attempts in all (default: ${DEFAULT_OUTBOX_POLICY.maxAttempts}, or one per --schedule step and one)`,
        ),
      OUTBOX_RETRY_HELP,
      false,
    ),
  ).action((id: string, url: string, flags: AddFlags) =>
    withJournal(flags, async (journal) => {
      const secrets =
        flags.secretEnv === undefined
          ? undefined
          : signingKeysFromEnv('--secret-env', flags.secretEnv, io.env);
      const waits = parseRetryFlags(flags, DEFAULT_OUTBOX_POLICY.maxDelayMs);
      const fresh = secrets === undefined ? generateWebhookSecret() : undefined;
      const input = {
        id,
        url,
        ...subscriptionFromFlags(flags),
        secrets: secrets ?? [fresh!],
        retry: {
          ...waits,
          ...(flags.maxAttempts === undefined
            ? {}
            : { maxAttempts: parsePositiveInt('--max-attempts', flags.maxAttempts) }),
        },
        ...settingsFromFlags(flags, false),
      };
      // A fresh secret is shown before the endpoint exists: never one made with a lost secret.
      // Input the journal would refuse is refused first, so no secret is shown for nothing.
      if (fresh !== undefined) {
        await checkEndpointByDryRun(input);
        if (await journal.endpoints.get(id))
          throw new EndpointStateError(id, `endpoint ${id} exists already`);
        await showOnce(io, `signing secret (shown once): ${fresh}\n`);
      }
      io.out(`added: ${formatEndpointLine(await journal.endpoints.add(input))}\n`);
    }),
  );
}

function registerRotate(endpoint: Command, io: CliIo): void {
  journalOptions(
    endpoint
      .command('rotate-secret')
      .description('add a signing secret; the older ones expire after the overlap')
      .argument('<name>')
      .option('--overlap <duration>', 'how long attempts carry the old signatures too', '24h')
      .option(
        '--secret-env <VAR>',
        'the new signing key (whsec_ or whsk_), from this variable (default: a fresh whsec_ secret, printed once)',
      ),
  ).action((id: string, flags: JournalFlags & { overlap: string; secretEnv?: string }) =>
    withJournal(flags, async (journal) => {
      const overlapMs = parseDurationMs('--overlap', flags.overlap);
      const given =
        flags.secretEnv === undefined
          ? undefined
          : checkSigningKey(
              `--secret-env ${flags.secretEnv}`,
              secretFromEnv('--secret-env', flags.secretEnv, io.env),
            );
      if (given === undefined) {
        // Shown before the rotation, as `endpoint add` shows its own (shown-once.ts).
        if (!(await journal.endpoints.get(id)))
          throw new EndpointStateError(id, `no endpoint ${JSON.stringify(id)} in the journal`);
        const fresh = generateWebhookSecret();
        await showOnce(io, `new signing secret (shown once): ${fresh}\n`);
        const { endpoint: e } = await journal.endpoints.rotateSecret(id, {
          overlapMs,
          secret: fresh,
        });
        return io.out(`rotated: ${formatEndpointLine(e)}\n`);
      }
      const { endpoint: e } = await journal.endpoints.rotateSecret(id, {
        overlapMs,
        secret: given,
      });
      io.out(`rotated: ${formatEndpointLine(e)}\n`);
    }),
  );
}
