import {
  DEFAULT_WORLD_PARAMS,
  RULES,
  RULE_IDS,
  ruleById,
  type RuleId,
  type WorldParams,
} from '@oncely/cli/sim/index.js';

/**
 * The world parameters as the page shows them and as the URL carries them. Query keys are the
 * `oncely sim run` flag names without the dashes, and the words for "no limit" are the CLI's
 * (`run`, `never`, `none`), so a shared link reads like the command that gives the same table.
 */
export interface ParamControl {
  readonly param: keyof WorldParams;
  /** The query key, which is also the CLI flag (`--${query}`). */
  readonly query: string;
  readonly label: string;
  readonly help: string;
  readonly kind: 'integer' | 'probability';
  readonly min: number;
  readonly max: number;
  readonly step: number;
  /** For a parameter whose null means "no limit" or "never": the CLI word and the choice labels. */
  readonly none?: { readonly word: string; readonly noneLabel: string; readonly someLabel: string };
  /** Shown under "More parameters". */
  readonly advanced?: boolean;
}

/**
 * The page's ranges are narrower than apps/sim's in two places (jobs, horizon, delays) so a timeline
 * stays drawable; every other range is the simulator's own.
 */
export const PARAM_CONTROLS: readonly ParamControl[] = [
  {
    param: 'seed',
    query: 'seed',
    label: 'Seed',
    help: 'Which world: every loss and delay follows from it.',
    kind: 'integer',
    min: 0,
    max: 0xffff_ffff,
    step: 1,
  },
  {
    param: 'credits',
    query: 'credits',
    label: 'Credits',
    help: 'Ceiling on all sends: a keyed send costs 2, any other 1.',
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    step: 1,
  },
  {
    param: 'requestLoss',
    query: 'request-loss',
    label: 'Request loss',
    help: 'Chance a request is lost before it arrives (0 to 1).',
    kind: 'probability',
    min: 0,
    max: 1,
    step: 0.05,
  },
  {
    param: 'receiptLoss',
    query: 'receipt-loss',
    label: 'Receipt loss',
    help: 'Chance a receipt is lost after its request arrived, a suppressed repeat’s too (0 to 1).',
    kind: 'probability',
    min: 0,
    max: 1,
    step: 0.05,
  },
  {
    param: 'maxDelayTicks',
    query: 'max-delay',
    label: 'Max delay (ticks)',
    help: 'Each leg takes 1 to this many ticks.',
    kind: 'integer',
    min: 1,
    max: 100,
    step: 1,
  },
  {
    param: 'retryAfterTicks',
    query: 'retry-after',
    label: 'Retry after (ticks)',
    help: 'Ticks since a job’s last send before it may be retried.',
    kind: 'integer',
    min: 1,
    max: 10_000,
    step: 1,
  },
  {
    param: 'maxAttempts',
    query: 'max-attempts',
    label: 'Attempt cap',
    help: 'Attempts per job, the first included.',
    kind: 'integer',
    min: 1,
    max: 10_000,
    step: 1,
    none: { word: 'none', noneLabel: 'No cap', someLabel: 'At most' },
  },
  {
    param: 'retentionTicks',
    query: 'retention',
    label: 'Key retention',
    help: 'How long the keyed receiver keeps a key after its first effect.',
    kind: 'integer',
    min: 1,
    max: 10_000,
    step: 1,
    none: { word: 'run', noneLabel: 'Whole run', someLabel: 'Ticks' },
  },
  {
    param: 'forgetKeysAt',
    query: 'forget-at',
    label: 'Forget keys',
    help: 'The tick at which the keyed receiver clears its ledger.',
    kind: 'integer',
    min: 0,
    max: 10_000,
    step: 1,
    none: { word: 'never', noneLabel: 'Never', someLabel: 'At tick' },
  },
  {
    param: 'horizonTicks',
    query: 'horizon',
    label: 'Horizon (ticks)',
    help: 'Sends happen at ticks 0 … horizon − 1; then messages in flight drain.',
    kind: 'integer',
    min: 0,
    max: 2_000,
    step: 1,
  },
  {
    param: 'jobs',
    query: 'jobs',
    label: 'Jobs',
    help: 'Jobs to deliver: one lane each on the timelines.',
    kind: 'integer',
    min: 1,
    max: 200,
    step: 1,
    advanced: true,
  },
  {
    param: 'sendsPerTick',
    query: 'sends-per-tick',
    label: 'Sends per tick',
    help: 'At most this many sends per tick.',
    kind: 'integer',
    min: 1,
    max: 100,
    step: 1,
    advanced: true,
  },
  {
    param: 'sendCost',
    query: 'send-cost',
    label: 'Send cost',
    help: 'Credits per send without a key.',
    kind: 'integer',
    min: 0,
    max: 1_000,
    step: 1,
    advanced: true,
  },
  {
    param: 'keyedSendCost',
    query: 'keyed-send-cost',
    label: 'Keyed send cost',
    help: 'Credits per keyed send.',
    kind: 'integer',
    min: 0,
    max: 1_000,
    step: 1,
    advanced: true,
  },
  {
    param: 'maxRetryAfterTicks',
    query: 'max-retry-after',
    label: 'Max retry after (ticks)',
    help: 'Cap on the backoff and learned retry-afters.',
    kind: 'integer',
    min: 1,
    max: 10_000,
    step: 1,
    advanced: true,
  },
];

/** What a query string (or a filled form) says, after checking each value once. */
export interface PageState {
  readonly params: WorldParams;
  readonly rules: readonly RuleId[];
}

export interface ReadResult extends PageState {
  /** One message per value that was refused (the default is used instead), naming it and its range. */
  readonly problems: readonly { readonly query: string; readonly message: string }[];
}

/** The raw text of each control, keyed by query name (`run`/`never`/`none` for null). */
export type RawValues = ReadonlyMap<string, string>;

/** Checks raw values against PARAM_CONTROLS; unknown keys are ignored, refused ones fall back to the default. */
export function readParams(raw: RawValues, rulesRaw: string | null): ReadResult {
  const params: Record<string, number | null> = { ...DEFAULT_WORLD_PARAMS };
  const problems: { query: string; message: string }[] = [];
  for (const control of PARAM_CONTROLS) {
    const text = raw.get(control.query);
    if (text === undefined) continue;
    const value = parseValue(control, text);
    if (value === undefined)
      problems.push({
        query: control.query,
        message: `${control.label}: got “${text}”, expected ${allowedText(control)}`,
      });
    else params[control.param] = value;
  }
  const rules = readRules(rulesRaw);
  if (rules === undefined)
    problems.push({
      query: 'rules',
      message: `Rules: got “${rulesRaw}”, expected rule ids from ${RULE_IDS.join(', ')}, or all`,
    });
  return { params: params as unknown as WorldParams, rules: rules ?? RULE_IDS, problems };
}

/** The state a URL's query string describes. */
export function stateFromQuery(search: string): ReadResult {
  const query = new URLSearchParams(search);
  const raw = new Map<string, string>();
  for (const control of PARAM_CONTROLS) {
    const value = query.get(control.query);
    if (value !== null) raw.set(control.query, value);
  }
  // `policy` is the older name of `rules`: links shared before the rename still open.
  return readParams(raw, query.get('rules') ?? query.get('policy'));
}

/**
 * The query string for a state: the seed always (so a link names its world), every other
 * parameter only where it differs from the default, and the rules unless all are shown.
 */
export function queryFromState(state: PageState): string {
  const query = new URLSearchParams();
  for (const control of PARAM_CONTROLS) {
    const value = state.params[control.param];
    if (control.param !== 'seed' && value === DEFAULT_WORLD_PARAMS[control.param]) continue;
    query.set(control.query, formatValue(control, value));
  }
  if (state.rules.length !== RULE_IDS.length) query.set('rules', state.rules.join(','));
  return `?${query.toString().replaceAll('%2C', ',')}`;
}

/** The `oncely sim run` command that prints the same outcome. */
export function cliCommandFor(state: PageState): string {
  const parts = ['npx oncely sim run'];
  for (const control of PARAM_CONTROLS) {
    const value = state.params[control.param];
    if (control.param !== 'seed' && value === DEFAULT_WORLD_PARAMS[control.param]) continue;
    parts.push(`--${control.query} ${formatValue(control, value)}`);
  }
  if (state.rules.length !== RULE_IDS.length) parts.push(`--rules ${state.rules.join(',')}`);
  return parts.join(' ');
}

/** A caption for an outcome: the seed, then each parameter that differs from the default channel. */
export function describeParams(params: WorldParams): string {
  const changed = PARAM_CONTROLS.filter(
    (c) => c.param !== 'seed' && params[c.param] !== DEFAULT_WORLD_PARAMS[c.param],
  ).map((c) => {
    const value = params[c.param];
    return `${c.label.replace(/ \(ticks\)$/, '').toLowerCase()} ${value === null ? c.none!.noneLabel.toLowerCase() : value}`;
  });
  return `Seed ${params.seed}, ${changed.length === 0 ? 'the default channel' : changed.join(', ')}`;
}

/** A value as the URL and the CLI spell it. */
export function formatValue(control: ParamControl, value: number | null): string {
  return value === null ? (control.none?.word ?? '') : String(value);
}

/** The allowed values, in words, for messages. */
export function allowedText(control: ParamControl): string {
  const range =
    control.kind === 'probability'
      ? 'a probability from 0 to 1'
      : `an integer from ${control.min} to ${control.max}`;
  return control.none ? `${range}, or ${control.none.word}` : range;
}

/** The value, or undefined when the text is not one the control allows. */
export function parseValue(control: ParamControl, text: string): number | null | undefined {
  const trimmed = text.trim();
  if (control.none && trimmed === control.none.word) return null;
  if (!/^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(trimmed)) return undefined;
  const value = Number(trimmed);
  if (control.kind === 'integer' && !Number.isInteger(value)) return undefined;
  if (value < control.min || value > control.max) return undefined;
  return value;
}

/** Rule ids in RULES order, or undefined when the list names an unknown rule or none at all. */
function readRules(text: string | null): readonly RuleId[] | undefined {
  if (text === null || text.trim() === 'all') return RULE_IDS;
  const ids = text
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0 || ids.some((id) => !ruleById(id))) return undefined;
  return RULES.map((rule) => rule.id).filter((id) => ids.includes(id));
}
