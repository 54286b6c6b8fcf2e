import { OncelyError } from '../contract/errors.js';
import { rotateSecrets } from '../contract/secret-rotation.js';
import { generateWebhookSecret } from '../contract/webhook-keys.js';
import type { Clock } from '../time/clock.js';
import { freshHealth, type EndpointRecord, type EndpointStore } from './endpoint.js';
import { applyPatch, type EndpointPatch } from './endpoint-patch.js';
import {
  checkEndpointId,
  checkSecret,
  prepareEndpoint,
  type EndpointInput,
} from './endpoint-input.js';

/** An endpoint that is not in the journal, or already there, or in a state that forbids the change. */
export class EndpointStateError extends OncelyError {
  readonly endpoint: string;
  constructor(endpoint: string, message: string) {
    super('endpoint_state', message);
    this.name = 'EndpointStateError';
    this.endpoint = endpoint;
  }
}

/** `journal.endpoints`: the receivers intents may name, their state, throttle, breaker and secrets. */
export interface Endpoints {
  add(input: EndpointInput): Promise<EndpointRecord>;
  list(): Promise<EndpointRecord[]>;
  get(id: string): Promise<EndpointRecord | undefined>;
  /** Edits the URL and settings; the fields not given stay. Bad input throws, nothing written. */
  update(id: string, patch: EndpointPatch): Promise<EndpointRecord>;
  /**
   * Deletes the endpoint; each of its pending intents is cancelled (recorded with the reason).
   * One a worker is sending right now finishes that attempt, then is refused: no endpoint.
   */
  delete(id: string, reason?: string): Promise<{ endpoint: EndpointRecord; cancelled: number }>;
  /** Held: its intents wait (not attempted, no budget spent) until `resume`. */
  pause(id: string, reason?: string): Promise<EndpointRecord>;
  /**
   * A paused endpoint active again, breaker closed, failures forgotten; its waiting intents are
   * due now. A disabled one stays disabled: it takes `enable`.
   */
  resume(id: string): Promise<EndpointRecord>;
  /**
   * Stopped, for an endpoint that is gone or broken (the receiver's signals and auto-disable do
   * it too): its intents wait, kept, and only an explicit `enable` starts it again.
   */
  disable(id: string, reason?: string): Promise<EndpointRecord>;
  /** A disabled (or paused) endpoint active again, as `resume`. */
  enable(id: string): Promise<EndpointRecord>;
  /**
   * Adds a signing secret (a fresh one unless given) and lets every older one expire after
   * `overlapMs` (default 24 h): meanwhile each attempt carries a signature by each.
   */
  rotateSecret(
    id: string,
    options?: { secret?: string; overlapMs?: number },
  ): Promise<{ endpoint: EndpointRecord; secret: string }>;
}

const missing = (id: string): EndpointStateError =>
  new EndpointStateError(id, `no endpoint ${JSON.stringify(id)} in the journal`);

export const DEFAULT_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function createEndpoints(store: EndpointStore | undefined, clock: Clock): Endpoints {
  const endpoints = (): EndpointStore => {
    if (!store) throw new EndpointStateError('', 'this journal store keeps no endpoints');
    return store;
  };
  const change = async (
    id: string,
    fn: (current: EndpointRecord, nowMs: number) => EndpointRecord,
  ): Promise<EndpointRecord> => {
    checkEndpointId(id);
    const nowMs = clock.now();
    const updated = await endpoints().update(id, (current) => {
      const next = { ...fn(current, nowMs), updatedAt: nowMs };
      return [next, next] as const;
    });
    if (!updated) throw missing(id);
    return updated;
  };
  /** Active, with fresh health, its parked intents due now; `resume` leaves a disabled one be. */
  const activate = async (id: string, verb: 'resume' | 'enable'): Promise<EndpointRecord> => {
    const active = await change(id, (e, nowMs) => {
      if (verb === 'resume' && e.state === 'disabled')
        throw new EndpointStateError(id, `endpoint ${id} is disabled; enable it to send again`);
      return { ...e, state: 'active', stateReason: null, health: freshHealth(nowMs) };
    });
    await endpoints().wake(id, clock.now());
    return active;
  };
  return {
    async add(input) {
      const endpoint = prepareEndpoint(input, clock.now());
      if (!(await endpoints().add(endpoint)))
        throw new EndpointStateError(endpoint.id, `endpoint ${endpoint.id} exists already`);
      return endpoint;
    },
    list: () => endpoints().list(),
    get: (id) => endpoints().get(checkEndpointId(id)),
    update: (id, patch) => change(id, (e) => applyPatch(e, patch)),
    async delete(id, reason) {
      const endpoint = await endpoints().get(checkEndpointId(id));
      if (!endpoint) throw missing(id);
      const nowMs = clock.now();
      const final = {
        stopReason: 'cancelled' as const,
        status: null,
        body: null,
        detail: reason ?? `endpoint ${id} deleted`,
        finishedAt: nowMs,
      };
      const cancelled = await endpoints().remove(id, final, nowMs);
      if (cancelled === undefined) throw missing(id);
      return { endpoint, cancelled };
    },
    pause: (id, reason = 'paused by hand') =>
      change(id, (e) => {
        if (e.state === 'disabled')
          throw new EndpointStateError(id, `endpoint ${id} is disabled; enable it first`);
        return { ...e, state: 'paused', stateReason: reason };
      }),
    disable: (id, reason = 'disabled by hand') =>
      change(id, (e) => ({ ...e, state: 'disabled', stateReason: reason })),
    resume: (id) => activate(id, 'resume'),
    enable: (id) => activate(id, 'enable'),
    async rotateSecret(id, options = {}) {
      const secret = checkSecret(options.secret ?? generateWebhookSecret());
      const overlapMs = options.overlapMs ?? DEFAULT_ROTATION_OVERLAP_MS;
      if (!Number.isFinite(overlapMs) || overlapMs < 0)
        throw new EndpointStateError(id, `overlap must be a duration >= 0, got ${overlapMs}`);
      const endpoint = await change(id, (e, nowMs) => ({
        ...e,
        secrets: rotateSecrets(e.secrets, secret, nowMs, overlapMs),
      }));
      return { endpoint, secret };
    },
  };
}
