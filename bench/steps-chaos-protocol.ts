/**
 * What bench/steps-chaos's parent and its checkout servers say to each other: the server's
 * configuration (one JSON argument) and the kill points it passes. A server kills itself
 * (SIGKILL) at the `after`-th pass of its life's kill point, after saying so on stdout.
 */
export const STEP_NAMES = ['charge', 'order', 'email'] as const;
export type StepName = (typeof STEP_NAMES)[number];

/** The step boundaries: inside a step before its recovery point commits, after it, before the receipt. */
export const KILL_KINDS = ['before-commit', 'after-commit', 'before-receipt'] as const;
export type KillKind = (typeof KILL_KINDS)[number];

export interface KillPoint {
  readonly kind: KillKind;
  /** The step, for before-commit and after-commit; null before the receipt. */
  readonly step: StepName | null;
}

export interface KillSpec extends KillPoint {
  /** Dies at this pass of the point in this life (counting from 1). */
  readonly after: number;
}

export interface ChaosServerConfig {
  readonly name: string;
  readonly port: number;
  readonly pgUrl: string;
  readonly schema: string;
  readonly paymentUrl: string;
  /** The server gives up on a payment call after this long (the mock's timeouts hang longer). */
  readonly paymentTimeoutMs: number;
  readonly leaseMs: number;
  readonly kill: KillSpec | null;
  /** The charge outside a step, under a new key per run (as before steps): the check must fail. */
  readonly broken: boolean;
}

export const ORDERS_TABLE = 'orders';
export const STEPS_TABLE = 'steps';

/** The line a server writes just before it kills itself. */
export const killLine = (point: KillPoint): string => `kill ${point.kind} ${point.step ?? '-'}`;

export function parseKillLine(line: string): KillPoint | undefined {
  const match = /^kill (\S+) (\S+)$/.exec(line);
  if (match === null) return undefined;
  return {
    kind: match[1] as KillKind,
    step: match[2] === '-' ? null : (match[2] as StepName),
  };
}
