import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Ledger, LedgerObserver } from 'oncely';

type SweepProgress = ReturnType<Ledger<unknown>['sweepProgress']>;
import type { RequestLogLine } from './request-log.js';

/** The services `oncely serve` mounts; any other path counts as `site`. */
export const METRIC_SERVICES = ['dropbox', 'notes', 'hooks', 'ledger', 'site'] as const;
export type MetricService = (typeof METRIC_SERVICES)[number];

/** Effect durations, in seconds: a SQLite insert is well under a millisecond, a slow handler seconds. */
const EFFECT_BUCKETS_S = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Outcomes that mean the key had been seen before: the client is retrying (or reusing) it. */
const RETRY_OUTCOMES = new Set(['replay', 'conflict', 'in-flight']);

export interface ServerMetrics {
  readonly registry: Registry;
  /** For the request log: counts one finished request. */
  countRequest(line: RequestLogLine): void;
  /** For `observeLedger`: effect latency and lease takeovers of one service. */
  ledgerObserver(service: MetricService): LedgerObserver;
  /** The Prometheus text exposition of every metric, as a GET /metrics answer. */
  respond(): Promise<Response>;
}

/**
 * The Prometheus metrics of `oncely serve` (prom-client, a registry of its own: nothing global).
 * Labels carry the service and the outcome only: never a caller or a key, which would leak who
 * sent what and grow without bound.
 */
export function createServerMetrics(sweepProgress?: () => SweepProgress): ServerMetrics {
  const registry = new Registry();
  if (sweepProgress) {
    // Read at scrape time from the sweeper's plain getter: nothing to keep in step.
    new Gauge({
      name: 'oncely_sweep_rows_left',
      help: 'Expired receipts and tombstones the retention sweep still has to handle (0 when it is idle and caught up).',
      registers: [registry],
      collect() {
        this.set(sweepProgress().rowsLeft);
      },
    });
    new Gauge({
      name: 'oncely_sweep_running',
      help: '1 while the retention sweep is running its bounded steps, else 0.',
      registers: [registry],
      collect() {
        this.set(sweepProgress().running ? 1 : 0);
      },
    });
  }
  const requests = new Counter({
    name: 'oncely_requests_total',
    help: 'Requests answered, by service and by what the ledger made of them (new, replay, conflict, in-flight, none).',
    labelNames: ['service', 'outcome'] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: 'oncely_retries_seen_total',
    help: 'Requests whose idempotency key had been seen before (a replay, a conflict, or a duplicate in flight), by service.',
    labelNames: ['service', 'outcome'] as const,
    registers: [registry],
  });
  const takeovers = new Counter({
    name: 'oncely_lease_takeovers_total',
    help: "Keys taken over after the first worker's lease expired: its effect may have happened outside the ledger's database.",
    labelNames: ['service'] as const,
    registers: [registry],
  });
  const effects = new Histogram({
    name: 'oncely_effect_duration_seconds',
    help: 'How long effects ran inside the ledger transaction, by service and result (executed, not_stored, effect_failed, lease_lost).',
    labelNames: ['service', 'result'] as const,
    buckets: EFFECT_BUCKETS_S,
    registers: [registry],
  });
  // Every series exists from the start at 0, so a rate() has a baseline before the first request.
  for (const service of METRIC_SERVICES) {
    for (const outcome of ['new', 'replay', 'conflict', 'in-flight', 'none'])
      requests.inc({ service, outcome }, 0);
    takeovers.inc({ service }, 0);
  }

  return {
    registry,
    countRequest(line) {
      const service = serviceOf(line.path);
      requests.inc({ service, outcome: line.outcome });
      if (line.key !== null && RETRY_OUTCOMES.has(line.outcome))
        retries.inc({ service, outcome: line.outcome });
    },
    ledgerObserver: (service) => (decision) => {
      if (decision.tookOver) takeovers.inc({ service });
      if (decision.effectMs !== undefined)
        effects.observe({ service, result: decision.kind }, decision.effectMs / 1000);
    },
    async respond() {
      return new Response(await registry.metrics(), {
        headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' },
      });
    },
  };
}

function serviceOf(path: string): MetricService {
  const first = path.split('/')[1] ?? '';
  return (METRIC_SERVICES as readonly string[]).includes(first) && first !== 'site'
    ? (first as MetricService)
    : 'site';
}
