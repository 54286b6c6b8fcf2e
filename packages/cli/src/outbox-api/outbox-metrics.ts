import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  ENDPOINT_STATES,
  type Clock,
  type EndpointRecord,
  type Journal,
  type SettledEvent,
} from 'oncely';

/** Attempt durations, in seconds: a local receiver answers in milliseconds, the timeout is 10 s. */
const ATTEMPT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Record to delivery, in seconds: at once, after a few retries, after an outage of hours or days. */
const DELIVERY_BUCKETS_S = [0.1, 0.5, 1, 5, 30, 60, 300, 1800, 3600, 7200, 21_600, 86_400, 259_200];
const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;

export interface OutboxMetrics {
  readonly registry: Registry;
  /** The worker's `onSettled`: counts each closed attempt and each finished message. */
  onSettled(event: SettledEvent): void;
  /** The Prometheus text exposition, as a GET /metrics answer. */
  respond(): Promise<Response>;
}

/**
 * The outbox's Prometheus metrics (prom-client, a registry of its own). Counters come from the
 * worker of this process; the queue and the endpoints are read from the journal at scrape time,
 * so they are the same whichever process is scraped. Labels are endpoint names (an intent sent to
 * a bare URL has endpoint=""), outcomes and states: never a key or a URL, which grow without bound.
 */
export function createOutboxMetrics(journal: Journal<unknown>, clock: Clock): OutboxMetrics {
  const registry = new Registry();
  const registers = [registry];
  const attempts = new Counter({
    name: 'oncely_outbox_attempts_total',
    help: 'Attempts closed by this process, by endpoint and outcome (ok, retry, fail, unknown).',
    labelNames: ['endpoint', 'outcome'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'oncely_outbox_attempt_duration_seconds',
    help: "How long each attempt's request took, from send to answer (or failure), by endpoint.",
    labelNames: ['endpoint'] as const,
    buckets: ATTEMPT_BUCKETS_S,
    registers,
  });
  const delivery = new Histogram({
    name: 'oncely_outbox_delivery_latency_seconds',
    help: 'From when a message was recorded to its delivery (retries and holds included), by endpoint.',
    labelNames: ['endpoint'] as const,
    buckets: DELIVERY_BUCKETS_S,
    registers,
  });
  const finished = new Counter({
    name: 'oncely_outbox_messages_finished_total',
    help: 'Messages this process settled for good, by endpoint and final state.',
    labelNames: ['endpoint', 'state'] as const,
    registers,
  });
  gaugesOfJournal(journal, clock, registers);
  return {
    registry,
    onSettled(event) {
      const endpoint = event.endpoint ?? '';
      if (event.attempt !== undefined && event.outcome !== undefined)
        attempts.inc({ endpoint, outcome: event.outcome });
      if (event.durationMs !== undefined) duration.observe({ endpoint }, event.durationMs / 1000);
      if (event.state === 'pending' || !event.written) return;
      finished.inc({ endpoint, state: event.state });
      if (event.state === 'delivered')
        delivery.observe({ endpoint }, Math.max(0, clock.now() - event.recordedAt) / 1000);
    },
    async respond() {
      return new Response(await registry.metrics(), {
        headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' },
      });
    },
  };
}

/** The gauges read at scrape time: the queue from journal.backlog(), each endpoint's row. */
function gaugesOfJournal(journal: Journal<unknown>, clock: Clock, registers: Registry[]): void {
  new Gauge({
    name: 'oncely_outbox_pending_messages',
    help: 'Messages pending in the journal (due, waiting for a retry, or held by their endpoint).',
    registers,
    async collect() {
      this.set((await journal.backlog()).pending);
    },
  });
  new Gauge({
    name: 'oncely_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest pending message, from when it was recorded; 0 when none is pending.',
    registers,
    async collect() {
      const { oldestPendingAt } = await journal.backlog();
      this.set(oldestPendingAt === null ? 0 : Math.max(0, clock.now() - oldestPendingAt) / 1000);
    },
  });
  const perEndpoint = (
    name: string,
    help: string,
    states: readonly string[],
    of: (e: EndpointRecord) => string,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['endpoint', 'state'] as const,
      registers,
      async collect() {
        this.reset(); // a deleted endpoint leaves no series behind
        for (const e of await journal.endpoints.list())
          for (const state of states) this.set({ endpoint: e.id, state }, of(e) === state ? 1 : 0);
      },
    });
  perEndpoint(
    'oncely_outbox_endpoint_breaker_state',
    "1 for each endpoint's breaker state (closed, open, half_open), 0 for the others.",
    BREAKER_STATES,
    (e) => e.health.breaker,
  );
  perEndpoint(
    'oncely_outbox_endpoint_state',
    '1 for each endpoint state (active, paused, disabled), 0 for the others.',
    ENDPOINT_STATES,
    (e) => e.state,
  );
}
