import { InvalidOptionError, isInvalidOptionError } from 'oncely';
import {
  BATCH_SETTING_IDS,
  RULES,
  batchSettingById,
  resolveWorldParams,
  ruleById,
  type Rule,
  type WorldParams,
} from '../../sim/index.js';

/** A world parameter on the command line. `none` is the word that means null (no limit, never). */
export interface WorldFlag {
  readonly param: keyof WorldParams;
  readonly flags: string;
  /** Commander's attribute name for the flag. */
  readonly key: string;
  readonly help: string;
  readonly none?: string;
}

export const WORLD_FLAGS: readonly WorldFlag[] = [
  { param: 'seed', flags: '--seed <n>', key: 'seed', help: 'which world (0 to 4294967295)' },
  { param: 'jobs', flags: '--jobs <n>', key: 'jobs', help: 'jobs to deliver' },
  {
    param: 'horizonTicks',
    flags: '--horizon <ticks>',
    key: 'horizon',
    help: 'dispatch at ticks 0 … horizon − 1',
  },
  {
    param: 'sendsPerTick',
    flags: '--sends-per-tick <n>',
    key: 'sendsPerTick',
    help: 'sends per tick, at most',
  },
  { param: 'credits', flags: '--credits <n>', key: 'credits', help: 'credit ceiling on all sends' },
  {
    param: 'sendCost',
    flags: '--send-cost <n>',
    key: 'sendCost',
    help: 'credits per send without a key',
  },
  {
    param: 'keyedSendCost',
    flags: '--keyed-send-cost <n>',
    key: 'keyedSendCost',
    help: 'credits per keyed send',
  },
  {
    param: 'requestLoss',
    flags: '--request-loss <p>',
    key: 'requestLoss',
    help: 'probability a request is lost',
  },
  {
    param: 'receiptLoss',
    flags: '--receipt-loss <p>',
    key: 'receiptLoss',
    help: 'probability a receipt is lost',
  },
  {
    param: 'maxDelayTicks',
    flags: '--max-delay <ticks>',
    key: 'maxDelay',
    help: 'each leg takes 1 … this many ticks',
  },
  {
    param: 'retryAfterTicks',
    flags: '--retry-after <ticks>',
    key: 'retryAfter',
    help: 'ticks since the last send before a retry',
  },
  {
    param: 'maxRetryAfterTicks',
    flags: '--max-retry-after <ticks>',
    key: 'maxRetryAfter',
    help: 'cap on the backoff and learned retry-afters',
  },
  {
    param: 'maxAttempts',
    flags: '--max-attempts <n|none>',
    key: 'maxAttempts',
    help: 'attempts per job',
    none: 'none',
  },
  {
    param: 'retentionTicks',
    flags: '--retention <ticks|run>',
    key: 'retention',
    help: 'key retention',
    none: 'run',
  },
  {
    param: 'forgetKeysAt',
    flags: '--forget-at <tick|never>',
    key: 'forgetAt',
    help: 'clear the receiver ledger at this tick',
    none: 'never',
  },
];

/** The world of `--setting` with each given flag on top, validated; errors name the flag. */
export function worldParamsFrom(
  options: Record<string, string | boolean | undefined>,
): WorldParams {
  const settingId = String(options['setting']);
  const setting = batchSettingById(settingId);
  if (!setting)
    throw new InvalidOptionError('--setting', settingId, `one of ${BATCH_SETTING_IDS.join(', ')}`);
  const given: Record<string, number | null> = {};
  for (const flag of WORLD_FLAGS) {
    const raw = options[flag.key];
    if (typeof raw !== 'string') continue;
    given[flag.param] = flag.none !== undefined && raw === flag.none ? null : numberFlag(raw);
  }
  try {
    return resolveWorldParams({ ...setting.overrides, ...given });
  } catch (error) {
    if (!isInvalidOptionError(error)) throw error;
    const flag = WORLD_FLAGS.find((f) => f.param === error.option);
    if (!flag) throw error;
    const raw = options[flag.key];
    const allowed =
      flag.none === undefined ? error.allowed : error.allowed.replace('null', flag.none);
    throw new InvalidOptionError(flag.flags.split(' ')[0]!, raw ?? error.value, allowed);
  }
}

/** A decimal number, or NaN (which validation then rejects, naming the flag). */
function numberFlag(raw: string): number {
  return /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(raw) ? Number(raw) : Number.NaN;
}

export function integerFlag(flag: string, raw: string, min: number, max: number): number {
  const value = numberFlag(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new InvalidOptionError(flag, raw, `an integer from ${min} to ${max}`);
  return value;
}

/** The rules of `--rules`, or of `--policy`, its older name; both given must name the same list. */
export function rulesOption(options: Record<string, string | boolean | undefined>): Rule[] {
  const rules = options['rules'];
  const policy = options['policy'];
  if (typeof rules === 'string' && typeof policy === 'string' && rules !== policy)
    throw new InvalidOptionError(
      '--policy',
      policy,
      `the same list as --rules (${rules}), or nothing: --policy is the older name of --rules`,
    );
  if (typeof rules === 'string') return rulesFrom('--rules', rules);
  if (typeof policy === 'string') return rulesFrom('--policy', policy);
  return [...RULES];
}

function rulesFrom(flag: string, list: string): Rule[] {
  if (list.trim() === 'all') return [...RULES];
  return list.split(',').map((id) => {
    const rule = ruleById(id.trim());
    if (!rule)
      throw new InvalidOptionError(
        flag,
        id.trim(),
        `one of ${RULES.map((r) => r.id).join(', ')}, or all`,
      );
    return rule;
  });
}
