import { Option, type Command } from 'commander';
import { InvalidOptionError, OncelyError, systemClock, validateKey } from 'oncely';
import { EXIT } from '../exit.js';
import { processIo, type CliIo } from '../cli-io.js';
import { DEFAULT_DELIVER, DELIVER_METHODS, deliver, readData } from './deliver.js';
import { deliverJournaled } from './deliver-journal.js';
import { parseHeader, parsePolicyFlags } from './deliver-options.js';
import { openJournal } from './journal-options.js';
import { formatDuration, parseRetryFlags, retryOptions, type RetryFlags } from './retry-flags.js';
import { DEFAULT_RETRY_POLICY } from 'oncely/policy';

/** What `oncely deliver --help` adds after the options. */
const DELIVER_HELP = `
Exit codes: 0 delivered (2xx); ${EXIT.fatalStatus} refused (fatal or unlisted status); ${EXIT.budgetExhausted} attempts or retry budget used up;
${EXIT.deadlinePassed} deadline passed (or the server asked to wait past it); ${EXIT.unknown} sent, no answer: outcome unknown (the work may
have happened); ${EXIT.notSent} not sent: every attempt failed before it left (connection refused, DNS failure), so nothing
happened; ${EXIT.usage} bad input or a missing argument.

Example:
  npx oncely hook --port 8765 --hook-script 429@1x3,200 &
  npx oncely deliver http://127.0.0.1:8765/hooks/run-complete --data '{"run_id":"run-9"}' --key run-9 --deadline 30s`;

interface DeliverFlags extends RetryFlags {
  data: string;
  key?: string;
  method: string;
  header?: string[];
  maxAttempts?: string;
  deadline?: string;
  attemptTimeout?: string;
  json?: boolean;
  journal?: string;
  create?: boolean;
}

/** `oncely deliver URL --data JSON`: one notification, delivered with retries under one key. */
export function registerDeliver(program: Command, io: CliIo = processIo): void {
  retryOptions(
    program
      .command('deliver')
      .description(
        'deliver one notification: one key on every attempt, Retry-After obeyed, every attempt printed',
      )
      // Both checked in the action, so that a bare `deliver` names everything it lacks at once.
      .argument(
        '[url]',
        'where to send it, e.g. http://127.0.0.1:8765/hooks/run-complete (required)',
      )
      .option(
        '-d, --data <json>',
        'the JSON body, sent byte for byte (@FILE reads a file) (required)',
      )
      .option('-k, --key <key>', 'the Idempotency-Key (default: derived from method, URL and data)')
      .addOption(
        new Option('-X, --method <method>', 'HTTP method')
          .choices(DELIVER_METHODS)
          .default(DEFAULT_DELIVER.method),
      )
      .option(
        '-H, --header <name: value>',
        'an extra request header (repeatable)',
        (v: string, all: string[] | undefined) => [...(all ?? []), v],
      )
      .option(
        '-n, --max-attempts <n>',
        `attempts in all, the first included (default: ${DEFAULT_DELIVER.maxAttempts})`,
      )
      .option(
        '--deadline <when>',
        'no attempt starts after this: a duration (30s, 1500ms) or an ISO instant',
      )
      .option('--attempt-timeout <duration>', 'one attempt may take this long (default: 10s)'),
    {
      schedule: `none: exponential backoff from ${formatDuration(DEFAULT_RETRY_POLICY.baseDelayMs)}`,
      maxDelay: formatDuration(DEFAULT_RETRY_POLICY.maxDelayMs),
      maxRetryAfter: formatDuration(DEFAULT_RETRY_POLICY.maxRetryAfterMs),
    },
  )
    .option(
      '--json',
      'print the result as JSON: report (every attempt), final status, body, Idempotent-Replayed',
    )
    .option(
      '--journal <file>',
      'record the intent in this SQLite journal first; run again after a crash to resume it under the same key',
    )
    .option('--create', 'start a new --journal file if none is there (else it is refused)')
    .addHelpText('after', DELIVER_HELP)
    .action((urlArgument: string | undefined, flags: DeliverFlags) =>
      runDeliver(urlArgument, flags, io),
    );
}

/** Checks the arguments, delivers (through the journal with --journal) and exits with the outcome's code. */
async function runDeliver(
  urlArgument: string | undefined,
  flags: DeliverFlags,
  io: CliIo,
): Promise<void> {
  const missing = [
    ...(urlArgument === undefined ? ['the <url> argument'] : []),
    ...(flags.data === undefined ? ['--data <json>'] : []),
  ];
  if (missing.length > 0) {
    throw new OncelyError(
      'invalid_option',
      `deliver is missing ${missing.join(' and ')}: npx oncely deliver <url> --data <json> [options] (run with --help for usage)`,
    );
  }
  const url = urlArgument as string;
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  try {
    if (flags.journal !== undefined) {
      if (flags.json)
        throw new InvalidOptionError(
          '--json',
          true,
          'no --json with --journal (see `oncely outbox show KEY`)',
        );
      const journal = await openJournal({ journal: flags.journal, create: flags.create === true });
      try {
        io.exit(
          await deliverJournaled(
            {
              url,
              data: readData(flags.data),
              method: flags.method,
              key: flags.key === undefined ? undefined : validateKey(flags.key),
              headers: (flags.header ?? []).map(parseHeader),
              ...parsePolicyFlags(flags, systemClock.now()),
              ...parseRetryFlags(flags, DEFAULT_RETRY_POLICY.maxDelayMs),
            },
            journal,
            { out: io.out, err: io.err, signal: controller.signal },
          ),
        );
      } finally {
        await journal.close();
      }
      return;
    }
    const result = await deliver(
      {
        url,
        data: readData(flags.data),
        method: flags.method,
        key: flags.key,
        headers: (flags.header ?? []).map(parseHeader),
        ...parsePolicyFlags(flags, systemClock.now()),
        ...parseRetryFlags(flags, DEFAULT_RETRY_POLICY.maxDelayMs),
        json: flags.json === true,
      },
      { out: io.out, err: io.err, signal: controller.signal },
    );
    io.exit(result.exitCode);
  } finally {
    process.off('SIGINT', onSignal);
  }
}
