import type { Command } from 'commander';
import {
  DEAD_STATES,
  INTENT_STATES,
  InvalidOptionError,
  type IntentFilter,
  type IntentState,
} from 'oncely';
import { ISO_INSTANT, parseDurationMs } from './deliver-options.js';

/** The filter flags as commander hands them over. One more criterion is one more field here. */
export interface FilterFlags {
  state?: string;
  dead?: boolean;
  target?: string;
  targetPrefix?: string;
  endpoint?: string;
  since?: string;
}

/** Adds the flags that narrow which intents a command looks at (`list`, `replay`). */
export function filterOptions(command: Command, states = INTENT_STATES.join(', ')): Command {
  return command
    .option('--state <states>', `only these states, comma-separated: ${states}`)
    .option('--dead', `only the dead letters: ${DEAD_STATES.join(', ')} (cancelled is apart)`)
    .option('--target <url>', 'only intents sent to exactly this URL')
    .option('--target-prefix <prefix>', 'only intents whose URL starts with this')
    .option('--endpoint <name>', 'only intents that name this endpoint')
    .option(
      '--since <when>',
      'only intents finished at or after this: an ISO instant (2026-12-01T00:00Z), a date (UTC) or a duration ago (24h)',
    );
}

/** The filter the flags describe; a bad flag is InvalidOptionError (one line, exit 2). */
export function parseFilterFlags(flags: FilterFlags, nowMs: number): IntentFilter {
  if (flags.dead && flags.state !== undefined)
    throw new InvalidOptionError('--dead', '--state', 'either --dead or --state, not both');
  return {
    ...(flags.dead ? { state: [...DEAD_STATES] } : {}),
    ...(flags.state === undefined ? {} : { state: parseStates(flags.state) }),
    ...(flags.target === undefined ? {} : { target: nonEmpty('--target', flags.target) }),
    ...(flags.targetPrefix === undefined
      ? {}
      : { targetPrefix: nonEmpty('--target-prefix', flags.targetPrefix) }),
    ...(flags.endpoint === undefined ? {} : { endpoint: nonEmpty('--endpoint', flags.endpoint) }),
    ...(flags.since === undefined ? {} : { finishedSince: parseSince(flags.since, nowMs) }),
  };
}

function parseStates(text: string): IntentState[] {
  const states = text.split(',').map((s) => s.trim());
  for (const state of states)
    if (!(INTENT_STATES as readonly string[]).includes(state))
      throw new InvalidOptionError('--state', text, `states among ${INTENT_STATES.join(', ')}`);
  return states as IntentState[];
}

function nonEmpty(option: string, text: string): string {
  if (text.trim() === '') throw new InvalidOptionError(option, text, 'a URL or the start of one');
  return text;
}

/** `2026-12-01T00:00Z`, `2026-12-01` (midnight UTC) or `24h` (that long before `nowMs`). */
export function parseSince(text: string, nowMs: number): number {
  const trimmed = text.trim();
  const at = /^\d{4}-\d{2}-\d{2}$/.test(trimmed)
    ? Date.parse(`${trimmed}T00:00Z`)
    : ISO_INSTANT.test(trimmed)
      ? Date.parse(trimmed)
      : /^\d+(\.\d+)?(ms|s|m|h)$/.test(trimmed)
        ? nowMs - parseDurationMs('--since', trimmed)
        : Number.NaN;
  if (Number.isNaN(at))
    throw new InvalidOptionError(
      '--since',
      text,
      'an ISO instant such as 2026-12-01T00:00Z, a date such as 2026-12-01, or a duration ago such as 24h',
    );
  return at;
}
