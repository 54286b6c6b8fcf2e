import type { Command } from 'commander';
import { DEFAULT_OUTBOX_POLICY, systemClock } from 'oncely';
import { formatIntentLine } from './format-intent.js';
import { EXIT } from '../exit.js';
import {
  parseDurationMs,
  parseHeader,
  parsePolicyFlags,
  parsePositiveInt,
} from './deliver-options.js';
import {
  collect,
  journalOptions,
  parseSecrets,
  type JournalFlags,
  withJournal,
} from './journal-options.js';
import { registerKeygen } from './outbox-keygen.js';
import {
  OUTBOX_RETRY_HELP,
  parseRetryFlags,
  retryOptions,
  type RetryFlags,
} from './retry-flags.js';
import { signingKeysFromEnv } from './webhook-key-flags.js';
import { registerOutboxList } from './outbox-list.js';
import { registerShow } from './outbox-show.js';
import { runMetrics } from './outbox-run-metrics.js';
import { registerOutboxReplay } from './outbox-replay.js';
import { deadLettersMade, formatCounts, runOutbox } from './outbox-run.js';
import { registerOutboxUi } from './outbox-ui.js';
import { registerOutboxServe } from './outbox-serve.js';
import { registerOutboxPublish } from './outbox-publish.js';
import { processIo, type CliIo } from '../cli-io.js';
import { parseDisabledNotice, registerOutboxEndpoint } from './outbox-endpoint.js';

interface AddFlags extends JournalFlags, RetryFlags {
  data: string;
  key?: string;
  method: string;
  header?: string[];
  secretHeader?: string[];
  maxAttempts?: string;
  deadline?: string;
  attemptTimeout?: string;
  createdBy?: string;
  orderingKey?: string;
}

interface RunCommandFlags extends JournalFlags {
  lease: string;
  batch: string;
  poll: string;
  watch?: boolean;
  secret?: string[];
  signingSecretEnv?: string;
  worker?: string;
  notifyDisabled?: string;
  failOnDead?: boolean;
  metricsPort?: string;
  metricsHost?: string;
}

export function registerOutbox(program: Command, io: CliIo = processIo): void {
  const outbox = program
    .command('outbox')
    .description(
      "the sender's journal: intents recorded before they are sent, and the worker that delivers them",
    )
    .addHelpText(
      'after',
      `\nThe journal is a SQLite file (--journal, default oncely-data/journal.db) or PostgreSQL (--db postgres://…).`,
    );
  registerAdd(outbox, io);
  registerOutboxPublish(outbox, io);
  registerOutboxList(outbox, io);
  registerShow(outbox, io);
  registerRun(outbox, io);
  registerRetry(outbox, io);
  registerCancel(outbox, io);
  registerKeygen(outbox, io);
  registerOutboxReplay(outbox, io);
  registerOutboxUi(outbox, io);
  registerOutboxEndpoint(outbox, io);
  registerOutboxServe(outbox, io);
}

/** `oncely outbox add`. */
function registerAdd(outbox: Command, io: CliIo): void {
  const { out } = io;
  journalOptions(
    retryOptions(
      outbox
        .command('add')
        .description('record an intent durably without sending it (the worker sends it)')
        .argument('[url]', 'where to send it (none with --endpoint)')
        .option('--endpoint <name>', 'send to this endpoint: its URL, secrets, state, throttle')
        .requiredOption('-d, --data <body>', 'the payload, kept byte for byte')
        .option('-k, --key <key>', 'the idempotency key (default: a fresh UUID)')
        .option('-X, --method <method>', 'HTTP method', 'POST')
        .option('-H, --header <name: value>', 'a request header (repeatable)', collect)
        .option(
          '--secret-header <name>',
          'a header whose value is never written down: re-supplied by `outbox run --secret` (repeatable)',
          collect,
        )
        .option(
          '-n, --max-attempts <n>',
          `attempts in all (default: ${DEFAULT_OUTBOX_POLICY.maxAttempts}, or one per --schedule step and one)`,
        )
        .option(
          '--deadline <when>',
          'no attempt starts after this: a duration (30s) or an ISO instant',
        )
        .option('--attempt-timeout <duration>', 'one attempt may take this long (default: 10s)')
        .option('--created-by <name>', 'who records it (default: oncely-cli)')
        .option(
          '--ordering-key <key>',
          'sent only after every earlier intent with this ordering key has finished (FIFO)',
        ),
      OUTBOX_RETRY_HELP,
    ),
  ).action((url: string | undefined, flags: AddFlags & { endpoint?: string }) =>
    withJournal(flags, async (journal) => {
      const headers = Object.fromEntries((flags.header ?? []).map(parseHeader));
      const { intent, created } = await journal.record({
        ...(url === undefined ? {} : { target: url }),
        ...(flags.endpoint === undefined ? {} : { endpoint: flags.endpoint }),
        body: flags.data,
        method: flags.method,
        headers,
        secretHeaders: flags.secretHeader ?? [],
        createdBy: flags.createdBy ?? 'oncely-cli',
        ...(flags.key === undefined ? {} : { key: flags.key }),
        ...(flags.orderingKey === undefined ? {} : { orderingKey: flags.orderingKey }),
        ...parsePolicyFlags(flags, systemClock.now()),
        ...parseRetryFlags(flags, DEFAULT_OUTBOX_POLICY.maxDelayMs),
      });
      out(`${created ? 'recorded' : 'already recorded'}: ${formatIntentLine(intent)}\n`);
    }),
  );
}

/** `oncely outbox run`. */
function registerRun(outbox: Command, io: CliIo): void {
  const { out, err } = io;
  journalOptions(
    outbox
      .command('run')
      .description(
        'deliver every unfinished intent (resuming after a crash under the same keys), with progress',
      )
      .option(
        '--lease <duration>',
        'how long a claim keeps other workers off an intent; longer than any attempt',
        '60s',
      )
      .option('--batch <n>', 'intents claimed and sent together', '16')
      .option('--poll <duration>', 'how often an idle worker looks again', '1s')
      .option(
        '--watch',
        'keep running and deliver new intents as they are recorded (until SIGINT/SIGTERM)',
      )
      .option(
        '--secret <HEADER=ENV>',
        "a secret header's value, read from an environment variable (repeatable)",
        collect,
      )
      .option(
        '--signing-secret-env <VAR>',
        'sign every attempt (Standard Webhooks) with the whsec_/whsk_ keys in this variable (space-separated: one signature each)',
      )
      .option(
        '--worker <name>',
        "this worker's name in leases and attempts (default: host:pid:random)",
      )
      .option(
        '--notify-disabled <url|endpoint:NAME>',
        'where to send a notice when an endpoint is disabled',
      )
      .option(
        '--fail-on-dead',
        `exit ${EXIT.deadLetters} when this run left dead letters (refused, gave_up, unknown)`,
      )
      .option(
        '--metrics-port <port>',
        'serve Prometheus metrics at /metrics on this port while it runs (0 picks a free one)',
      )
      .option('--metrics-host <host>', 'where the metrics listen', '127.0.0.1'),
  ).action((flags: RunCommandFlags) =>
    withJournal(flags, async (journal, signal) => {
      const runFlags = {
        leaseMs: parseDurationMs('--lease', flags.lease),
        batchSize: parsePositiveInt('--batch', flags.batch),
        pollMs: parseDurationMs('--poll', flags.poll),
        watch: flags.watch === true,
        secrets: parseSecrets(flags.secret, io.env),
        signingSecret:
          flags.signingSecretEnv === undefined
            ? undefined
            : signingKeysFromEnv('--signing-secret-env', flags.signingSecretEnv, io.env),
        worker: flags.worker,
        disabledNotice: parseDisabledNotice(flags.notifyDisabled),
      };
      // Started once every flag is checked: a refused flag leaves no server behind.
      const metrics = await runMetrics(journal, flags, err);
      const summary = await runOutbox(journal, runFlags, {
        out,
        err,
        progressBar: io.errIsTTY,
        signal,
        onSettled: metrics?.onSettled,
      }).finally(() => metrics?.close());
      // This run's own work first: the journal may hold intents of other runs and workers.
      out(
        `outbox run: ${formatCounts(summary.finished).replace('no intents', 'no intent finished')}; journal now: ${formatCounts(summary.journal)}\n`,
      );
      const pending = summary.journal.pending;
      if (pending > 0 && !signal.aborted) {
        err(
          `oncely: ${pending} intent(s) still pending: a secret header has no --secret, their endpoint is paused or disabled, or another worker holds them\n`,
        );
        io.exit(EXIT.failure);
      }
      const dead = deadLettersMade(summary);
      if (flags.failOnDead && dead > 0) {
        err(`oncely: this run left ${dead} dead letter(s): oncely outbox list --dead\n`);
        io.exit(EXIT.deadLetters);
      }
    }),
  );
}

/** `oncely outbox retry`. */
function registerRetry(outbox: Command, io: CliIo): void {
  const { out } = io;
  journalOptions(
    outbox
      .command('retry')
      .description(
        'give a dead intent (refused, gave_up, unknown, cancelled) a fresh budget under the same key',
      )
      .argument('<key>')
      .option('-n, --max-attempts <n>', 'more attempts (default: its own budget again)')
      .option(
        '--deadline <when>',
        'a new deadline: a duration (30s) or an ISO instant (default: none)',
      ),
  ).action((key: string, flags: JournalFlags & { maxAttempts?: string; deadline?: string }) =>
    withJournal(flags, async (journal) => {
      const intent = await journal.retry(key, parsePolicyFlags(flags, systemClock.now()));
      out(`reopened: ${formatIntentLine(intent)}\n`);
    }),
  );
}

/** `oncely outbox cancel`. */
function registerCancel(outbox: Command, io: CliIo): void {
  const { out } = io;
  journalOptions(
    outbox
      .command('cancel')
      .description('cancel a pending intent (it is never sent again)')
      .argument('<key>')
      .option('--reason <text>', 'why, kept in the report'),
  ).action((key: string, flags: JournalFlags & { reason?: string }) =>
    withJournal(flags, async (journal) => {
      const intent = await journal.cancel(key, flags.reason);
      out(`cancelled: ${formatIntentLine(intent)}\n`);
    }),
  );
}
