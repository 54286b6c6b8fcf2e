/**
 * The retry rules. A rule is data, three facets the engine switches on, so the page can list
 * the rules and describe each without running one:
 * - keyed: the receiver stores the job key atomically with the effect and suppresses repeats
 *   while the key survives; a keyed send costs keyedSendCost.
 * - choice: which unconfirmed, eligible job a retry goes to ('none': no retries).
 * - timeout: how long a job waits after its last send before it becomes eligible.
 * Every rule sends fresh jobs first, lowest job number first (docs/origins.md, "The retry-rule simulator": "New jobs have priority").
 */
export const RULE_CHOICES = ['none', 'oldest', 'random'] as const;
export type RuleChoice = (typeof RULE_CHOICES)[number];

/**
 * - fixed: retryAfterTicks.
 * - backoff: the client's own backoff (src/policy/backoff.ts), full jitter, base retryAfterTicks,
 *   capped at maxRetryAfterTicks, drawn per job at each send.
 * - learned: RFC 6298's retransmission timeout over the round trips observed so far.
 * - policy: oncely's client, step by step: an attempt without a receipt after retryAfterTicks is
 *   judged unknown by decide() (src/policy/decide.ts), which says when to retry or why to stop;
 *   the credits are its retry token bucket (apps/sim/oncely-client-rule.ts).
 */
export const RULE_TIMEOUTS = ['fixed', 'backoff', 'learned', 'policy'] as const;
export type RuleTimeout = (typeof RULE_TIMEOUTS)[number];

export const RULE_IDS = [
  'send-once',
  'retry-oldest',
  'random-retry',
  'retry-key',
  'backoff-key',
  'learned-key',
  'oncely-key',
] as const;
export type RuleId = (typeof RULE_IDS)[number];

export interface Rule {
  readonly id: RuleId;
  /** The name shown in tables (the simulator write-up's names for its four rules (docs/origins.md)). */
  readonly label: string;
  /** One or two sentences for the page and `--help`. */
  readonly description: string;
  /** True for the four rules of the simulator write-up (docs/origins.md) (none of which learns). */
  readonly fromSeed: boolean;
  readonly keyed: boolean;
  readonly choice: RuleChoice;
  readonly timeout: RuleTimeout;
}

export const RULES: readonly Rule[] = [
  {
    id: 'send-once',
    label: 'Send once',
    description: 'One attempt per job, then live with the uncertainty.',
    fromSeed: true,
    keyed: false,
    choice: 'none',
    timeout: 'fixed',
  },
  {
    id: 'retry-oldest',
    label: 'Retry oldest',
    description:
      'Fresh jobs first, then the oldest (lowest-numbered) unconfirmed job whose retry-after has elapsed.',
    fromSeed: true,
    keyed: false,
    choice: 'oldest',
    timeout: 'fixed',
  },
  {
    id: 'random-retry',
    label: 'Random retry',
    description:
      'Fresh jobs first, then a uniformly random unconfirmed job whose retry-after has elapsed.',
    fromSeed: true,
    keyed: false,
    choice: 'random',
    timeout: 'fixed',
  },
  {
    id: 'retry-key',
    label: 'Retry + key',
    description:
      'The Retry oldest dispatcher; the receiver stores each job key with its effect and suppresses repeats while the key survives.',
    fromSeed: true,
    keyed: true,
    choice: 'oldest',
    timeout: 'fixed',
  },
  {
    id: 'backoff-key',
    label: 'Backoff + key',
    description:
      "Retry + key with a per-job exponential retry-after and full jitter: the client's own backoff, in ticks.",
    fromSeed: false,
    keyed: true,
    choice: 'oldest',
    timeout: 'backoff',
  },
  {
    id: 'learned-key',
    label: 'Learned timeout + key',
    description:
      "Retry + key whose retry-after adapts to the round trips it has observed (RFC 6298 smoothing, Karn's rule).",
    fromSeed: false,
    keyed: true,
    choice: 'oldest',
    timeout: 'learned',
  },
  {
    id: 'oncely-key',
    label: 'oncely client + key',
    description:
      "oncely's own client: each send and wait decided by decide() in ticks (attempt timeout retry-after, full-jitter backoff, attempt cap, deadline at the horizon), the credits as its retry token bucket.",
    fromSeed: false,
    keyed: true,
    choice: 'oldest',
    timeout: 'policy',
  },
];

/** The rule with this id, or undefined. */
export function ruleById(id: string): Rule | undefined {
  return RULES.find((rule) => rule.id === id);
}
