import { InvalidOptionError } from 'oncely';

/**
 * What the hostile hook receiver answers, in order (docs/origins.md, "The webhook storm": "a mock that can say no").
 *
 * - `status`: answer with this status `count` times; `retryAfterSeconds` adds a Retry-After.
 * - `swallow`: do the work (a completion), then drop the connection without a reply: the lost
 *   ack that makes a retry look like a second intent.
 * - `throttle`: answer 429 with Retry-After until `windowMs` after the first hit, then move on.
 *
 * The last step repeats for ever, so `429x3,200` answers 200 to every hit after the third; a
 * throttle that ends the script answers 200 once its window has passed.
 */
export type HookStep =
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly count: number;
      readonly retryAfterSeconds?: number;
    }
  | { readonly kind: 'swallow'; readonly count: number }
  | { readonly kind: 'throttle'; readonly windowMs: number };

export interface HookScript {
  readonly steps: readonly HookStep[];
  /** The script as written, normalised (`429@1x3,200`). */
  readonly text: string;
}

/** The grammar, for `--help` and error messages. */
export const HOOK_SCRIPT_GRAMMAR =
  'comma-separated steps: STATUS[@RETRY_AFTER_S][xN] | swallow[xN] | throttle:DURATION (e.g. 429@1x3,200 or throttle:2s,200 or swallow,200)';

const STATUS_STEP = /^(\d{3})(?:@(\d+))?(?:x(\d+))?$/;
const SWALLOW_STEP = /^swallow(?:x(\d+))?$/;
const THROTTLE_STEP = /^throttle:(\d+(?:\.\d+)?)(ms|s)?$/;
/** Enough for any demo; a longer script is a typo (`429x30000`), not a plan. */
const MAX_COUNT = 10_000;

/** Parses a script such as `429@1x3,200`; throws an {@link InvalidOptionError} naming the bad step. */
export function parseHookScript(text: string): HookScript {
  if (typeof text !== 'string' || text.trim() === '')
    throw new InvalidOptionError('script', text, HOOK_SCRIPT_GRAMMAR);
  const steps = text.split(',').map((raw) => parseStep(raw.trim().toLowerCase(), text));
  return { steps, text: steps.map(formatStep).join(',') };
}

function parseStep(token: string, script: string): HookStep {
  const bad = (why: string): never => {
    throw new InvalidOptionError(
      'script',
      script,
      `${HOOK_SCRIPT_GRAMMAR}; step ${JSON.stringify(token)} ${why}`,
    );
  };
  let m = STATUS_STEP.exec(token);
  if (m) {
    const status = Number(m[1]);
    if (status < 200 || status > 599) bad('has a status outside 200-599');
    const count = parseCount(m[3], bad);
    return m[2] === undefined
      ? { kind: 'status', status, count }
      : { kind: 'status', status, count, retryAfterSeconds: Number(m[2]) };
  }
  m = SWALLOW_STEP.exec(token);
  if (m) return { kind: 'swallow', count: parseCount(m[1], bad) };
  m = THROTTLE_STEP.exec(token);
  if (m) {
    const windowMs = Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
    if (!(windowMs > 0) || !Number.isFinite(windowMs)) bad('needs a window > 0');
    return { kind: 'throttle', windowMs: Math.round(windowMs) };
  }
  return bad('is not understood');
}

function parseCount(raw: string | undefined, bad: (why: string) => never): number {
  if (raw === undefined) return 1;
  const count = Number(raw);
  if (count < 1 || count > MAX_COUNT) bad(`needs a count from 1 to ${MAX_COUNT}`);
  return count;
}

export function formatStep(step: HookStep): string {
  switch (step.kind) {
    case 'status':
      return `${step.status}${step.retryAfterSeconds === undefined ? '' : `@${step.retryAfterSeconds}`}${step.count === 1 ? '' : `x${step.count}`}`;
    case 'swallow':
      return `swallow${step.count === 1 ? '' : `x${step.count}`}`;
    case 'throttle':
      return step.windowMs % 1000 === 0
        ? `throttle:${step.windowMs / 1000}s`
        : `throttle:${step.windowMs}ms`;
  }
}

/** What the receiver does with one arrival that is not a replay. */
export type ScriptAction =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterSeconds?: number }
  | { readonly kind: 'swallow' };

/** Where a script stands: the step, how many hits that step has answered, and the first hit's time. */
export interface ScriptCursor {
  readonly step: number;
  readonly usedInStep: number;
  readonly firstHitAt: number | undefined;
}

export const SCRIPT_START: ScriptCursor = { step: 0, usedInStep: 0, firstHitAt: undefined };

/**
 * The script as a pure step: what to answer at `nowMs`, and the cursor after. Throttle steps
 * measure their window from the first hit the receiver saw (docs/origins.md, "The webhook storm": "until N seconds after the
 * first hit") and answer the seconds left, rounded up, so an obedient client arrives after it.
 */
export function nextScriptAction(
  script: HookScript,
  cursor: ScriptCursor,
  nowMs: number,
): [ScriptAction, ScriptCursor] {
  const firstHitAt = cursor.firstHitAt ?? nowMs;
  let { step, usedInStep } = cursor;
  for (;;) {
    const current = script.steps[step];
    if (current === undefined) throw new Error('hook script has no steps');
    const isLast = step === script.steps.length - 1;
    if (current.kind === 'throttle') {
      const leftMs = firstHitAt + current.windowMs - nowMs;
      if (leftMs > 0) {
        return [
          { kind: 'status', status: 429, retryAfterSeconds: Math.max(1, Math.ceil(leftMs / 1000)) },
          { step, usedInStep, firstHitAt },
        ];
      }
      if (isLast)
        return [
          { kind: 'status', status: 200 },
          { step, usedInStep, firstHitAt },
        ];
      step += 1;
      usedInStep = 0;
      continue;
    }
    if (usedInStep >= current.count && !isLast) {
      step += 1;
      usedInStep = 0;
      continue;
    }
    const action: ScriptAction =
      current.kind === 'swallow'
        ? { kind: 'swallow' }
        : current.retryAfterSeconds === undefined
          ? { kind: 'status', status: current.status }
          : {
              kind: 'status',
              status: current.status,
              retryAfterSeconds: current.retryAfterSeconds,
            };
    return [action, { step, usedInStep: usedInStep + 1, firstHitAt }];
  }
}
