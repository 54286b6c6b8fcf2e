/**
 * bench/chaos's faults: what each kind does to the system, how long it lasts and what a client
 * must see meanwhile, and how long the system takes to serve again after it (the recovery). Every
 * choice (which process, how long) is drawn from the run's seeded generator.
 */
import { execFileSync } from 'node:child_process';
import { setTimeout as wait } from 'node:timers/promises';
import { NO_PROXY_FAULTS, type ProxyFaults } from './chaos-proxy.js';
import { firstKeyedSuccess, probeDuring } from './chaos-probe.js';
import type { ChaosSystem } from './chaos-system.js';

export const FAULT_KINDS = [
  'worker-kill',
  'receiver-kill',
  'receiver-term',
  'pg-stop',
  'proxy-swallow',
  'proxy-reset',
  'proxy-delay',
  'disk-full',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The outage a stopped PostgreSQL must recover from within, once it accepts connections again. */
export const PG_RECOVERY_LIMIT_MS = 2000;
/** A recovery that takes longer than this is a failure to survive. */
const RECOVERY_LIMIT_MS = 30_000;
const PROBE_EVERY_MS = 200;

export interface FaultTiming {
  /** How long PostgreSQL stays down: [min, max] ms. */
  readonly pgDownMs: readonly [number, number];
  /** How long a proxy fault or a full disk lasts: [min, max] ms. */
  readonly windowMs: readonly [number, number];
}

export interface FaultResult {
  readonly kind: FaultKind;
  readonly target: string;
  /** From the fault's end (the process restarted, the server accepting again) to serving again. */
  readonly recoveryMs: number | undefined;
  readonly probes: number;
  readonly violations: readonly string[];
  /**
   * A recovery past its limit (PostgreSQL: PG_RECOVERY_LIMIT_MS): apart from the violations, as
   * the only timed criterion, which bench/chaos fails on and the suite's short run reports.
   */
  readonly slow?: string;
}

export interface FaultContext {
  readonly system: ChaosSystem;
  readonly timing: FaultTiming;
  /** A seeded draw in [0, 1). */
  readonly draw: () => number;
}

const between = (draw: () => number, [min, max]: readonly [number, number]): number =>
  Math.round(min + draw() * (max - min));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function injectFault(kind: FaultKind, context: FaultContext): Promise<FaultResult> {
  const { system, draw } = context;
  switch (kind) {
    case 'worker-kill': {
      const worker = system.workers[Math.floor(draw() * system.workers.length)]!;
      const ready = worker.nextReady();
      const killedAt = performance.now();
      worker.signal('SIGKILL');
      const recoveryMs = (await withLimit(ready)) ?? Number.NaN;
      return result(kind, worker.name, recoveryMs - killedAt);
    }
    case 'receiver-kill':
    case 'receiver-term': {
      const receiver = system.receivers[Math.floor(draw() * system.receivers.length)]!;
      const restarted = receiver.process.nextReady();
      const signalledAt = performance.now();
      receiver.process.signal(kind === 'receiver-kill' ? 'SIGKILL' : 'SIGTERM');
      // A draining process still serves the connections it has (a probe's keep-alive one
      // included): the recovery is the new process's first keyed answer.
      if ((await withLimit(restarted)) === undefined)
        return result(kind, receiver.process.name, undefined);
      const servedAt = await firstKeyedSuccess(receiver.url, RECOVERY_LIMIT_MS);
      return result(kind, receiver.process.name, servedAt && servedAt - signalledAt);
    }
    case 'pg-stop':
      return stopPostgres(context);
    case 'proxy-swallow':
      return proxyWindow(kind, context, { ...NO_PROXY_FAULTS, swallowRate: 0.3 });
    case 'proxy-reset':
      return proxyWindow(kind, context, { ...NO_PROXY_FAULTS, resetRate: 0.3 });
    case 'proxy-delay':
      return proxyWindow(kind, context, { ...NO_PROXY_FAULTS, delayMs: between(draw, [100, 800]) });
    case 'disk-full':
      return fillDisk(context);
  }
}

function result(
  kind: FaultKind,
  target: string,
  recoveryMs: number | undefined,
  probes = 0,
  violations: readonly string[] = [],
): FaultResult {
  const ms = recoveryMs === undefined || Number.isNaN(recoveryMs) ? undefined : recoveryMs;
  return { kind, target, recoveryMs: ms, probes, violations };
}

async function withLimit(promise: Promise<number>): Promise<number | undefined> {
  const cancel = new AbortController();
  const limit = wait(RECOVERY_LIMIT_MS, undefined, { signal: cancel.signal }).catch(
    () => undefined,
  );
  try {
    return await Promise.race([promise, limit]);
  } finally {
    cancel.abort(); // a pending limit would keep the process alive for its 30 s
  }
}

/**
 * PostgreSQL down for a while (`pg_ctl stop -m immediate`, a crash), then started again. Meanwhile
 * both PostgreSQL receivers must answer 503 + Retry-After to /healthz and keyed requests; after,
 * each must serve a keyed request within PG_RECOVERY_LIMIT_MS, with no process restarted.
 */
async function stopPostgres({ system, timing, draw }: FaultContext): Promise<FaultResult> {
  const downMs = between(draw, timing.pgDownMs);
  const receivers = system.receivers.filter((r) => r.store === 'postgres');
  // Nothing on PostgreSQL may need a restart to recover: its pools reconnect by themselves.
  const dependents = [...receivers.map((r) => r.process), ...system.workers];
  const restartsBefore = dependents.map((child) => child.restarts);
  system.cluster.crash();
  const outage = new AbortController();
  const probing = probeDuring(
    receivers.map((r) => r.url),
    true,
    PROBE_EVERY_MS,
    outage.signal,
  );
  await sleep(downMs);
  outage.abort();
  const { probes, violations } = await probing;
  system.cluster.start(); // returns once the server accepts connections
  const acceptingAt = performance.now();
  const servedAt = await Promise.all(
    receivers.map((r) => firstKeyedSuccess(r.url, RECOVERY_LIMIT_MS)),
  );
  const recoveryMs = servedAt.some((at) => at === undefined)
    ? undefined
    : Math.max(...servedAt.map((at) => at! - acceptingAt));
  const found = [...violations];
  dependents.forEach((child, i) => {
    if (child.restarts !== restartsBefore[i])
      found.push(`${child.name} restarted during the outage`);
  });
  const slow =
    recoveryMs !== undefined && recoveryMs > PG_RECOVERY_LIMIT_MS
      ? `pg-stop: first keyed success ${Math.round(recoveryMs)} ms after PostgreSQL accepted (limit ${PG_RECOVERY_LIMIT_MS} ms)`
      : undefined;
  return {
    ...result('pg-stop', `postgres ${downMs} ms`, recoveryMs, probes, found),
    ...(slow === undefined ? {} : { slow }),
  };
}

async function proxyWindow(
  kind: FaultKind,
  { system, timing, draw }: FaultContext,
  faults: ProxyFaults,
): Promise<FaultResult> {
  const windowMs = between(draw, timing.windowMs);
  system.proxy.faults = faults;
  await sleep(windowMs);
  system.proxy.faults = NO_PROXY_FAULTS;
  const endedAt = performance.now();
  const servedAt = await firstKeyedSuccess(
    system.targets.postgres.replace(/\/effects$/, ''),
    RECOVERY_LIMIT_MS,
  );
  return result(kind, `proxy ${windowMs} ms`, servedAt && servedAt - endedAt);
}

/**
 * The SQLite receiver's disk full: its file-size limit (RLIMIT_FSIZE) lowered to 0 on the running
 * process with prlimit, so every write that grows a file fails with EFBIG (Node ignores
 * SIGXFSZ), then raised again. Meanwhile keyed requests must be 503 + Retry-After.
 */
async function fillDisk({ system, timing, draw }: FaultContext): Promise<FaultResult> {
  const receiver = system.receivers.find((r) => r.store === 'sqlite')!;
  const pid = receiver.process.pid;
  const windowMs = between(draw, timing.windowMs);
  if (pid === undefined) return result('disk-full', 'no process', undefined, 0, ['not running']);
  setFileSizeLimit(pid, '0');
  const full = new AbortController();
  const probing = probeDuring([receiver.url], false, PROBE_EVERY_MS, full.signal);
  await sleep(windowMs);
  full.abort();
  const { probes, violations } = await probing;
  setFileSizeLimit(pid, 'unlimited');
  const endedAt = performance.now();
  const servedAt = await firstKeyedSuccess(receiver.url, RECOVERY_LIMIT_MS);
  return result(
    'disk-full',
    `sqlite ${windowMs} ms`,
    servedAt && servedAt - endedAt,
    probes,
    violations,
  );
}

/** The soft limit only: the hard one stays unlimited, so it can be raised again. */
function setFileSizeLimit(pid: number, soft: string): void {
  try {
    execFileSync('prlimit', ['--pid', String(pid), `--fsize=${soft}:unlimited`]);
  } catch {
    // The process exited meanwhile: its successor starts without the limit.
  }
}
