import type { CommanderError } from 'commander';
import { isOncelyError } from 'oncely';
import { processIo, type CliIo } from './cli-io.js';

/**
 * Exit codes shared by every command, one table (docs/cli.md, "Exit codes"; `oncely --help`).
 * Distinct codes let scripts tell the stops apart.
 */
export const EXIT = {
  ok: 0,
  /** An unexpected failure, or a failure with no code of its own. */
  failure: 1,
  /**
   * Bad input, for every command: a malformed argument or option, or a request the journal
   * refuses as it stands (a key or endpoint it does not hold, a state that forbids it, a
   * different payload under a recorded key). Nothing was changed.
   */
  usage: 2,
  /** The server refused the request (fatal or unlisted status). */
  fatalStatus: 3,
  /** Every allowed attempt was used (or the retry budget ran dry). */
  budgetExhausted: 4,
  /** The deadline passed, or the server asked to wait past it. */
  deadlinePassed: 5,
  /** The outcome is unknown: the work may have happened. */
  unknown: 6,
  /** A check (such as `sim batch --check`) did not hold. */
  checkFailed: 7,
  /** Nothing was sent: every attempt was refused before it left (connection refused, DNS). Safe to retry. */
  notSent: 8,
  /** `outbox run --fail-on-dead`: intents this run finished became dead letters. */
  deadLetters: 9,
} as const;

/**
 * Error codes that mean the command was given something wrong: exit 2, as the docs promise. The
 * journal's refusals are among them (`outbox show nope` used to exit 2 and `outbox retry
 * nope` 1): naming an intent or endpoint it does not hold is bad input whichever command does it.
 */
const USAGE_CODES = new Set([
  'invalid_option',
  'invalid_key',
  'invalid_tokens',
  'intent_state',
  'intent_conflict',
  'endpoint_state',
]);

/** Prints one line, `oncely: message`, and sets a non-zero exit code. Never a stack trace for bad input. */
export function exitWithError(
  error: unknown,
  io: CliIo = processIo,
  code: number = isOncelyError(error) && USAGE_CODES.has(error.code) ? EXIT.usage : EXIT.failure,
): void {
  const message = error instanceof Error ? error.message : String(error);
  io.err(`oncely: ${message}\n`);
  if (io.env['ONCELY_DEBUG'] && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
  io.exit(code);
}

/** What commander adds after a refusal of its own, kept on the same line. */
const USAGE_HINT = '(run with --help for usage)';

/**
 * Commander's own refusal (an unknown option, a bad choice, a missing argument) in the style of
 * every other error: `error: unknown option '--x'\n(Did you mean --y?)\n` becomes one line,
 * `oncely: unknown option '--x' (Did you mean --y?) (run with --help for usage)`.
 */
export function commanderErrorLine(message: string): string {
  const text = message
    .trim()
    .replace(/^error:\s*/, '')
    .replace(/\s*\n\s*/g, ' ');
  return `oncely: ${text} ${USAGE_HINT}\n`;
}

/**
 * The exit code of a commander stop: 0 where commander ends well (--help, `help`, --version),
 * 2 (usage) for everything it refuses, and for a missing command (it prints the help then).
 */
export function commanderExitCode(error: CommanderError): number {
  return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
