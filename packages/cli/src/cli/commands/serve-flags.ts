import { InvalidOptionError, OncelyError, systemClock } from 'oncely';
import { createCallers, generateDevToken, parseTokenPairs } from '../../serve/callers.js';
import type { DropboxFault } from '../../receivers/dropbox/dropbox-options.js';
import { parseHookScript } from '../../receivers/hook/hook-script.js';
import { parseDeadline, parseDurationMs } from './deliver-options.js';
import { httpUrl } from '../../shared/http-url.js';

export interface ServeFlags {
  port: string;
  host: string;
  dataDir: string;
  db?: string;
  tokens?: string;
  devToken: boolean;
  fault?: DropboxFault;
  hookScript: string;
  notifyUrl?: string;
  closesAt?: string[];
  quiet?: boolean;
  notesPublic: boolean;
  requestTimeout: string;
  headersTimeout: string;
  grace: string;
}

/** A duration option as milliseconds: `30s`, `1500ms`, `2m`. */
export const durationFlag = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

/** Close times from `--closes-at`: one for every assignment, and some for one assignment each. */
export interface CloseTimes {
  readonly all?: number;
  readonly byAssignment: ReadonlyMap<string, number>;
}

/**
 * Parses `--closes-at` values: `WHEN` closes every assignment, `ASSIGNMENT=WHEN` one of them.
 * WHEN is an ISO instant (2026-09-14T23:59:00Z) or a duration from now (30s, 2m, 1h).
 */
export function parseCloseTimes(values: readonly string[], nowMs: number): CloseTimes {
  let all: number | undefined;
  const byAssignment = new Map<string, number>();
  for (const value of values) {
    const eq = value.indexOf('=');
    const assignment = eq > 0 ? value.slice(0, eq).trim() : undefined;
    const when = eq > 0 ? value.slice(eq + 1) : value;
    let at: number;
    try {
      at = parseDeadline(when, nowMs);
    } catch {
      throw new InvalidOptionError(
        '--closes-at',
        value,
        '[ASSIGNMENT=]WHEN, WHEN an ISO instant such as 2026-09-14T23:59:00Z or a duration from now such as 30s or 2m',
      );
    }
    if (assignment === undefined) all = at;
    else byAssignment.set(assignment, at);
  }
  return all === undefined ? { byAssignment } : { all, byAssignment };
}

function parseHookScriptOption(text: string): ReturnType<typeof parseHookScript> {
  try {
    return parseHookScript(text);
  } catch (error) {
    if (error instanceof InvalidOptionError)
      throw new InvalidOptionError('--hook-script', text, error.allowed);
    throw error;
  }
}

/** The flags of `oncely serve`, checked before anything starts (a bad one is one line, exit 2). */
export function resolveServeFlags(
  flags: ServeFlags,
  env: Readonly<Record<string, string | undefined>>,
) {
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port.trim()) || port > 65_535)
    throw new InvalidOptionError(
      '--port',
      flags.port,
      'an integer from 0 to 65535 (0 picks a free port)',
    );
  const hookScript = parseHookScriptOption(flags.hookScript);
  const requestTimeoutMs = parseDurationMs('--request-timeout', flags.requestTimeout);
  const headersTimeoutMs = parseDurationMs('--headers-timeout', flags.headersTimeout);
  const graceMs = parseDurationMs('--grace', flags.grace);
  if (requestTimeoutMs < 1)
    throw new InvalidOptionError(
      '--request-timeout',
      flags.requestTimeout,
      'a duration of at least 1ms',
    );
  if (headersTimeoutMs < 1 || headersTimeoutMs > requestTimeoutMs) {
    throw new InvalidOptionError(
      '--headers-timeout',
      flags.headersTimeout,
      `a duration from 1ms to the request timeout (${flags.requestTimeout})`,
    );
  }
  const closes = parseCloseTimes(flags.closesAt ?? [], systemClock.now());
  const { callers, devToken } = callersOf(flags, env);
  return {
    port,
    hookScript,
    requestTimeoutMs,
    headersTimeoutMs,
    graceMs,
    closes,
    devToken,
    callers,
    ...(flags.notifyUrl === undefined
      ? {}
      : { notifyUrl: httpUrl('--notify-url', flags.notifyUrl) }),
  };
}

/**
 * The callers of a server (`oncely serve`, `oncely outbox serve`): a tokens file, ONCELY_TOKENS,
 * and a dev token (ONCELY_DEV_TOKEN, or a fresh one) unless --no-dev-token. None is refused.
 */
export function callersOf(
  flags: { readonly tokens?: string | undefined; readonly devToken?: boolean | undefined },
  env: Readonly<Record<string, string | undefined>>,
) {
  const envToken = env['ONCELY_DEV_TOKEN'];
  const devToken = flags.devToken
    ? envToken
      ? parseTokenPairs(`dev=${envToken}`, 'ONCELY_DEV_TOKEN')[0]![1]
      : generateDevToken()
    : undefined;
  const callers = createCallers({
    tokensFile: flags.tokens,
    tokensEnv: env['ONCELY_TOKENS'],
    devToken,
  });
  if (callers.names.length === 0)
    throw new OncelyError(
      'invalid_option',
      'no callers: pass --tokens FILE or ONCELY_TOKENS, or leave out --no-dev-token',
    );
  return { callers, devToken };
}
