import { Option, type Command } from 'commander';
import { isOncelyError } from 'oncely';
import { DEFAULT_BACKEND_OPTIONS } from '../../serve/open-backend.js';
import {
  DEFAULT_SERVER_OPTIONS,
  startServer,
  type RunningServer,
} from '../../serve/start-server.js';
import {
  DROPBOX_FAULTS,
  FAULT_HEADER,
  type DropboxFault,
} from '../../receivers/dropbox/dropbox-options.js';
import { HOOK_SCRIPT_GRAMMAR } from '../../receivers/hook/hook-script.js';
import { EXIT } from '../exit.js';
import {
  durationFlag,
  resolveServeFlags,
  type CloseTimes,
  type ServeFlags,
} from './serve-flags.js';

export { parseCloseTimes, type CloseTimes } from './serve-flags.js';
import { processIo, type CliIo } from '../cli-io.js';

/** What `oncely serve --help` adds after the options. */
const SERVE_HELP = `
Prints its URLs and an access token (fresh each start; ONCELY_DEV_TOKEN fixes it). Writes and
dumps need Authorization: Bearer <token>; idempotency keys, rows and hook hits are per caller.
The request log is one JSON line per request on stdout; everything else goes to stderr.
SIGINT/SIGTERM: new requests get 503 + Retry-After, the requests in flight finish (up to
--grace, then 503 and rolled back), the store closes, exit 0. Limits: docs/serve.md.

Routes:
  POST /dropbox/submissions {student, assignment}   Idempotency-Key required; 201, replay, 403 assignment_closed
  GET  /dropbox/submissions/:key                    status lookup by key (allowed after the close)
  GET  /dropbox/store                               your rows: key, student, assignment, status, writes
  GET|PATCH /notes/:id                              the versioned notes (docs/origins.md)
  POST /hooks/…  ·  GET /hooks/debug/hits           the hostile hook receiver, answering from --hook-script
  GET  /ledger/receipts  ·  /store                  your receipts (JSON) · the live store view (page)
  GET  /healthz  ·  /                               health · the simulator page (index until built)

Examples:
  npx oncely serve                         (in a clone: npm start, or npm start -- --port 9000)
  npx oncely serve --port 0 --fault swallow-first-ack --closes-at lab3=2m
  ONCELY_TOKENS=alice=0123456789abcdef,bob=fedcba9876543210 npx oncely serve --db postgres://postgres@127.0.0.1:5432/test`;

/** `oncely serve`: the dropbox, notes and hook services on one server, with a ledger on SQLite or PostgreSQL. */
export function registerServe(program: Command, io: CliIo = processIo): void {
  program
    .command('serve')
    .description(
      'run the dropbox, notes and hook services on one server, with an idempotency ledger (SQLite or PostgreSQL)',
    )
    .option(
      '-p, --port <port>',
      'port to listen on (0 picks a free one)',
      String(DEFAULT_SERVER_OPTIONS.port),
    )
    .option(
      '--host <host>',
      'address to bind; anything but loopback is reachable from other machines',
      DEFAULT_SERVER_OPTIONS.host,
    )
    .option(
      '--data-dir <dir>',
      'where the SQLite ledger lives (created on demand)',
      DEFAULT_BACKEND_OPTIONS.dataDir,
    )
    .option('--db <url>', 'use PostgreSQL instead of SQLite: postgres://user@host:5432/db')
    .option(
      '--tokens <file>',
      'caller=token lines (one per line; # comments); ONCELY_TOKENS=alice=…,bob=… adds more',
    )
    .option(
      '--no-dev-token',
      'do not add the dev caller (then --tokens or ONCELY_TOKENS must name one)',
    )
    .addOption(
      new Option(
        '--fault <fault>',
        `inject a fault into every dropbox submission (or per request: ${FAULT_HEADER}: swallow-first-ack)`,
      ).choices(DROPBOX_FAULTS),
    )
    .option('--hook-script <script>', `what /hooks/… answers: ${HOOK_SCRIPT_GRAMMAR}`, '200')
    .option(
      '--closes-at <when>',
      'assignments close: [ASSIGNMENT=]ISO-instant or duration from now (repeatable)',
      (v: string, all: string[] | undefined) => [...(all ?? []), v],
    )
    .option(
      '--notify-url <url>',
      'run an outbox worker: each completed hook arrival owes one notification to this URL, recorded with its ack',
    )
    .option('-q, --quiet', 'do not print a JSON line per request')
    .option('--notes-public', 'notes can be read without a token (the default, for the lab)', true)
    .option('--no-notes-public', 'reading a note needs a token too')
    .option(
      '--request-timeout <duration>',
      'longest time to receive a whole request (headers and body); then 408',
      durationFlag(DEFAULT_SERVER_OPTIONS.requestTimeoutMs),
    )
    .option(
      '--headers-timeout <duration>',
      'longest time to receive the request headers; then 408',
      durationFlag(DEFAULT_SERVER_OPTIONS.headersTimeoutMs),
    )
    .option(
      '--grace <duration>',
      'on SIGINT/SIGTERM, how long requests in flight may finish before they are answered 503 and rolled back',
      durationFlag(DEFAULT_SERVER_OPTIONS.graceMs),
    )
    .addHelpText('after', SERVE_HELP)
    .action((flags: ServeFlags) => runServe(flags, io));
}

function banner(
  server: RunningServer,
  o: {
    devToken: string | undefined;
    callerNames: readonly string[];
    fault: DropboxFault | undefined;
    hookScript: string;
    closes: CloseTimes;
    notesPublic: boolean;
  },
): string {
  const { url } = server;
  const lines = [
    `oncely serve: listening on ${url}`,
    `  store       ${server.backend.kind} ${server.backend.description}`,
    `  callers     ${o.callerNames.join(', ')}`,
    `  dropbox     POST ${url}/dropbox/submissions · GET ${url}/dropbox/store`,
    `  notes       GET|PATCH ${url}/notes/:id (${o.notesPublic ? 'reading needs no token: --no-notes-public to ask for one' : 'every request needs a token'})`,
    `  hooks       ${url}/hooks/… (script ${o.hookScript}) · GET ${url}/hooks/debug/hits`,
    `  store view  ${url}/store${o.devToken ? `#token=${o.devToken}` : ''}`,
    `  page        ${url}/`,
  ];
  if (o.fault)
    lines.push(
      `  fault       ${o.fault}: every new submission commits, then its connection is dropped`,
    );
  if (o.closes.all !== undefined)
    lines.push(`  closes      every assignment at ${new Date(o.closes.all).toISOString()}`);
  for (const [assignment, at] of o.closes.byAssignment)
    lines.push(`  closes      ${assignment} at ${new Date(at).toISOString()}`);
  if (o.devToken) {
    lines.push(`  dev token   ${o.devToken}`);
    lines.push(`  shell       export URL=${url} TOKEN=${o.devToken}`);
    lines.push('');
    lines.push('Try:');
    lines.push(
      `  curl -i -X POST ${url}/dropbox/submissions -H 'Authorization: Bearer ${o.devToken}' \\`,
    );
    lines.push(
      `    -H 'Idempotency-Key: achen:lab3:v1' -H 'Content-Type: application/json' -d '{"student":"achen","assignment":"lab3"}'`,
    );
  }
  lines.push('Stop with Ctrl-C: requests in flight finish first.');
  return `${lines.join('\n')}\n`;
}

/** Resolves with the exit code once a signal has stopped the server; a second signal cuts it short. */
function waitForSignal(server: RunningServer, io: CliIo): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const unsubscribe = io.onStop((signal) => {
      if (stopping) {
        io.err('oncely serve: second signal: cutting the requests in flight\n');
        server.server.closeAllConnections();
        process.exit(EXIT.failure);
      }
      stopping = true;
      const inFlight = server.inFlight();
      io.err(
        `oncely serve: ${signal}: shutting down; ${inFlight} request${inFlight === 1 ? '' : 's'} in flight\n`,
      );
      server.close().then(
        ({ drained }) => {
          io.err(
            drained
              ? 'oncely serve: stopped\n'
              : 'oncely serve: stopped after cutting requests that outlived the grace period\n',
          );
          unsubscribe();
          resolve(drained ? EXIT.ok : EXIT.failure);
        },
        (error: unknown) => {
          io.err(
            `oncely: shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`,
          );
          resolve(EXIT.failure);
        },
      );
    });
  });
}

/** Starts the server the flags describe, prints where it is, and runs until SIGINT or SIGTERM. */
async function runServe(flags: ServeFlags, io: CliIo): Promise<void> {
  const { port, hookScript, requestTimeoutMs, headersTimeoutMs, graceMs, closes, ...who } =
    resolveServeFlags(flags, io.env);
  const { devToken, callers, notifyUrl } = who;
  const { err } = io;
  const server = await startServer({
    port,
    host: flags.host,
    dataDir: flags.dataDir,
    db: flags.db,
    callers,
    fault: flags.fault,
    hookScript,
    ...(notifyUrl === undefined ? {} : { notifyUrl }),
    closesAtOf: (assignment) => closes.byAssignment.get(assignment) ?? closes.all,
    notesPublic: flags.notesPublic,
    requestTimeoutMs,
    headersTimeoutMs,
    graceMs,
    ...(flags.quiet ? {} : { log: (line: string) => io.out(`${line}\n`) }),
    onPoolError: (error) => err(`oncely serve: database connection lost: ${error.message}\n`),
    onError: (error) => {
      const message = error instanceof Error ? error.message : String(error);
      // A failed background purge says so itself ("retention purge failed: …"); the rest are requests.
      err(
        `oncely serve: ${isOncelyError(error) && error.code === 'purge_failed' ? message : `request failed: ${message}`}\n`,
      );
      if (io.env['ONCELY_DEBUG'] && error instanceof Error && error.stack) err(`${error.stack}\n`);
    },
  });
  if (!server.loopback)
    err(
      `oncely serve: warning: listening on ${flags.host}, reachable from other machines; anyone with a token can write\n`,
    );
  err(
    banner(server, {
      devToken,
      callerNames: callers.names,
      fault: flags.fault,
      hookScript: hookScript.text,
      closes,
      notesPublic: flags.notesPublic,
    }),
  );
  io.exit(await waitForSignal(server, io));
}
