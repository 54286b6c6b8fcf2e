import { Option, type Command } from 'commander';
import { InvalidOptionError } from 'oncely';
import { formatHit } from '../../receivers/hook/format-hit.js';
import { verifyingKeysFromEnv } from './webhook-key-flags.js';
import { startHookServer } from '../../receivers/hook/hook-server.js';
import { HOOK_SCRIPT_GRAMMAR, parseHookScript } from '../../receivers/hook/hook-script.js';
import {
  RETRY_AFTER_FORMATS,
  type HookHit,
  type RetryAfterFormat,
} from '../../receivers/hook/hook-service.js';
import { processIo, type CliIo } from '../cli-io.js';

interface HookFlags {
  port: string;
  host: string;
  script?: string;
  hookScript?: string;
  retryAfterFormat: RetryAfterFormat;
  quiet?: boolean;
  sqliteFile?: string;
  webhookSecretEnv?: string;
}

/** `oncely hook`: the webhook storm's hostile receiver on a real port (docs/origins.md), logging every arrival. */
export function registerHook(program: Command, io: CliIo = processIo): void {
  program
    .command('hook')
    .description('run the hostile webhook receiver: answers from a script, records every arrival')
    .option('-p, --port <port>', 'port to listen on (0 picks one)', '8765')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    // One name with `oncely serve`: --hook-script; --script stays as the older spelling.
    .option('--hook-script <script>', `${HOOK_SCRIPT_GRAMMAR} (default: 200)`)
    .option('-s, --script <script>', 'the same as --hook-script (an older spelling, kept)')
    .addOption(
      new Option(
        '--retry-after-format <format>',
        'write Retry-After as delay-seconds or as an HTTP-date',
      )
        .choices(RETRY_AFTER_FORMATS)
        .default('seconds'),
    )
    .option('--sqlite-file <file>', 'keep keys and hits in this SQLite file (default: in memory)')
    .option('-q, --quiet', 'do not log each arrival')
    .option(
      '--webhook-secret-env <VAR>',
      'require Standard Webhooks signatures, checked with the whsec_ secrets or whpk_ public keys in this variable (space-separated; 401 otherwise); webhook-id is the key',
    )
    .addHelpText(
      'after',
      `
Every path except the debug routes is a hook: POST, PUT, PATCH and DELETE are answered by the
script and recorded (time, method, path, Idempotency-Key, body hash). A key that already
completed is answered from the stored ack with Idempotent-Replayed: true (a different request
under it: 422). Keys and hits live in an in-memory SQLite ledger (--sqlite-file keeps them).

Routes:
  GET    /debug/hits[?limit=N]  the newest hits and the counts (arrivals, completions, replays) as JSON
  DELETE /debug/hits            clear the hits and the script position (POST /debug/reset: the same)

Examples:
  npx oncely hook --hook-script 429@1x3,200       three 429s with Retry-After: 1, then 200
  npx oncely hook --hook-script throttle:5s,200   429 until 5 s after the first hit
  npx oncely hook --hook-script swallow,200       do the work, drop the connection, then 200`,
    )
    .action(async (flags: HookFlags) => {
      const port = Number(flags.port);
      if (!/^\d+$/.test(flags.port) || port > 65_535)
        throw new InvalidOptionError('--port', flags.port, 'an integer from 0 to 65535');
      if (
        flags.hookScript !== undefined &&
        flags.script !== undefined &&
        flags.hookScript !== flags.script
      ) {
        throw new InvalidOptionError(
          '--script',
          flags.script,
          `the same script as --hook-script (${flags.hookScript}), or only one of them`,
        );
      }
      const script = parseHookScript(flags.hookScript ?? flags.script ?? '200');
      let originAt: number | undefined;
      const log = (hit: HookHit): void => {
        originAt ??= hit.at;
        io.out(`${formatHit(hit, originAt)}\n`);
      };
      const hook = await startHookServer({
        port,
        host: flags.host,
        script,
        retryAfterFormat: flags.retryAfterFormat,
        ...(flags.sqliteFile === undefined ? {} : { sqliteFile: flags.sqliteFile }),
        ...(flags.quiet ? {} : { onHit: log }),
        ...(flags.webhookSecretEnv === undefined
          ? {}
          : {
              webhookSecrets: verifyingKeysFromEnv(
                '--webhook-secret-env',
                flags.webhookSecretEnv,
                io.env,
              ),
            }),
      });
      io.out(
        `oncely hook: listening on ${hook.url} (script ${script.text}); hits at ${hook.url}/debug/hits\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      const { arrivals, completions, replays } = await hook.service.counts();
      await hook.close();
      io.out(
        `oncely hook: stopped after ${arrivals} arrivals, ${completions} completions, ${replays} replays\n`,
      );
    });
}
