import type { Command } from 'commander';
import { InvalidOptionError } from 'oncely';
import { parseDurationMs, parsePositiveInt } from './deliver-options.js';

/** The endpoint settings `endpoint add` and `endpoint update` both take. */
export interface EndpointSettingFlags {
  rate?: string;
  breakerRatio?: string;
  breakerMin?: string;
  breakerWindow?: string;
  breakerCoolDown?: string;
  autoDisableAfter?: string;
}

/** The settings as an endpoint's input or patch holds them; a flag not given is absent. */
export interface EndpointSettings {
  ratePerSecond?: number | null;
  breaker?: {
    failureRatio?: number;
    minRequests?: number;
    windowMs?: number;
    coolDownMs?: number;
  };
  autoDisableAfterMs?: number;
}

/** Each setting's flag, its help and, for `add`, its default (`update` keeps what is there). */
const SETTING_OPTIONS: readonly (readonly [flag: string, help: string, addDefault: string])[] = [
  ['--breaker-ratio <r>', 'open the breaker at this failure ratio', '0.5'],
  ['--breaker-min <n>', 'requests in a window before the breaker judges', '10'],
  ['--breaker-window <duration>', "the breaker's window", '30s'],
  ['--breaker-cool-down <duration>', 'open this long before one probe', '10s'],
  ['--auto-disable-after <duration>', 'disable after only failures this long', '5d'],
];

/** Adds `--rate`, `--breaker-*` and `--auto-disable-after`; an edit takes `--rate none`. */
export function endpointSettingOptions(command: Command, edit: boolean): Command {
  command.option(
    '--rate <n>',
    edit
      ? 'messages per second across every worker, or none'
      : 'messages per second, across every worker (default: no limit)',
  );
  for (const [flag, help, addDefault] of SETTING_OPTIONS)
    command.option(flag, edit ? help : `${help} (default: ${addDefault})`);
  return command;
}

export function positiveNumber(option: string, text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new InvalidOptionError(option, text, 'a number > 0');
  return n;
}

/** Only the entries whose value is defined: a flag not given leaves its field out. */
export function definedOnly<T extends object>(
  fields: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/**
 * The settings the flags give, parsed; `breaker` only when a `--breaker-*` flag is given.
 * `rateNone` lets `--rate none` lift the limit (an edit; a new endpoint has none by default).
 */
export function settingsFromFlags(
  flags: EndpointSettingFlags,
  rateNone: boolean,
): EndpointSettings {
  const given = <T>(text: string | undefined, parse: (text: string) => T) =>
    text === undefined ? undefined : parse(text);
  const ratePerSecond = given(flags.rate, (t) =>
    rateNone && t === 'none' ? null : positiveNumber('--rate', t),
  );
  const breaker = definedOnly({
    failureRatio: given(flags.breakerRatio, (t) => positiveNumber('--breaker-ratio', t)),
    minRequests: given(flags.breakerMin, (t) => parsePositiveInt('--breaker-min', t)),
    windowMs: given(flags.breakerWindow, (t) => parseDurationMs('--breaker-window', t)),
    coolDownMs: given(flags.breakerCoolDown, (t) => parseDurationMs('--breaker-cool-down', t)),
  });
  return definedOnly({
    ratePerSecond,
    breaker: Object.keys(breaker).length > 0 ? breaker : undefined,
    autoDisableAfterMs: given(flags.autoDisableAfter, (t) =>
      parseDurationMs('--auto-disable-after', t),
    ),
  });
}
