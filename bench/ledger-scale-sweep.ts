/**
 * The sweep part of bench/ledger-scale: how long a write waits while the retention sweep drains a
 * backlog of expired receipts, against how long it waits with no sweep at all (the machine's own
 * noise floor, measured in the same run, with the same writers, for the same time).
 *
 * Two writers run new-key requests throughout, one in this process and one in a second process on
 * the same database. Time is cut into windows that alternate: no sweep, sweep, no sweep, sweep …
 * A sweep window runs the ledger's sweeper and stops it (between two steps) when the window ends;
 * the next sweep window resumes it where it stopped. Each quiet window lasts as long as the sweep
 * window before it. Every write is counted in the window it was due in.
 */
import { fork } from 'node:child_process';
import { createLedger, type LedgerStore, type SweepResult } from 'oncely';
import type { Place } from './ledger-scale-places.js';
import { epochMs, writeUntil, type WriteSample } from './ledger-scale-writer.js';

/** Latencies of the writes due in one kind of window. */
export interface WindowStats {
  readonly writes: number;
  readonly failed: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Writes that waited more than 100 ms. */
  readonly over100: number;
}

export interface SweepReport {
  readonly rows: number;
  /** Seconds the sweep ran (its windows only), and what it did. */
  readonly sweepSeconds: number;
  readonly swept: SweepResult;
  /** Sweep steps: how many, and how long each held the store (ms). */
  readonly steps: {
    readonly count: number;
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly maxMs: number;
  };
  readonly windows: number;
  readonly quiet: { readonly inProcess: WindowStats; readonly secondProcess: WindowStats };
  readonly sweeping: { readonly inProcess: WindowStats; readonly secondProcess: WindowStats };
}

const quantile = (sorted: number[], q: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

function stats(samples: WriteSample[]): WindowStats {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  return {
    writes: samples.length,
    failed: samples.filter((s) => !s.ok).length,
    p50Ms: quantile(ms, 0.5),
    p99Ms: quantile(ms, 0.99),
    maxMs: ms.at(-1) ?? 0,
    over100: ms.filter((m) => m > 100).length,
  };
}

/** Starts the second process's writer on `place`; resolves once it is writing. */
async function secondWriter(place: Place): Promise<() => Promise<WriteSample[]>> {
  const child = fork(
    new URL('./ledger-scale-writer.js', import.meta.url),
    ['--child', JSON.stringify(place.target)],
    { stdio: 'inherit' },
  );
  const samples = new Promise<WriteSample[]>((resolve, reject) => {
    child.on('message', (m) => Array.isArray(m) && resolve(m as WriteSample[]));
    child.on('exit', (code) => code !== 0 && reject(new Error(`writer process exited ${code}`)));
  });
  await new Promise<void>((resolve) => child.on('message', (m) => m === 'writing' && resolve()));
  return () => {
    child.send('stop');
    return samples;
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Loads `rows` receipts that expired over the last hour, then sweeps them in alternating windows. */
export async function sweepInWindows(
  make: () => Place,
  rows: number,
  windowMs: number,
  stepMs?: number,
): Promise<SweepReport> {
  const place = make();
  try {
    await place.store.ready?.();
    const now = Date.now();
    await place.load('current', 'oncely_ledger', {
      from: 0,
      to: rows,
      expiresFrom: now - 3_600_000,
      spreadMs: 3_600_000,
    });
    const stepTimes: number[] = [];
    const store: LedgerStore<unknown> = {
      ...place.store,
      sweep: async (nowMs, tombstoneMs, limit) => {
        const started = performance.now();
        const step = await place.store.sweep(nowMs, tombstoneMs, limit);
        if (!step.busy) stepTimes.push(performance.now() - started);
        return step;
      },
    };
    const ledger = createLedger({
      store,
      ...(stepMs === undefined ? {} : { sweepStepMs: stepMs }),
    });
    const stopSecond = await secondWriter(place);
    let done = false;
    const first = writeUntil(place.store, 'first', () => done);

    const sweepWindows: Array<[number, number]> = [];
    let tombstoned = 0;
    let deleted = 0;
    let sweepMs = 0;
    const measuredFrom = epochMs();
    for (let finished = false; !finished; ) {
      const last = sweepWindows.at(-1);
      await sleep(last ? last[1] - last[0] : windowMs); // a quiet window as long as the last sweep window
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), windowMs);
      const from = epochMs();
      const swept = await ledger.purgeExpired(stop.signal);
      const to = epochMs();
      clearTimeout(timer);
      sweepWindows.push([from, to]);
      sweepMs += to - from;
      tombstoned += swept.tombstoned;
      deleted += swept.deleted;
      finished = !ledger.sweepProgress().interrupted;
    }
    const lastWindow = sweepWindows.at(-1)!;
    await sleep(lastWindow[1] - lastWindow[0]); // and a last quiet window
    done = true;
    const [inProcess, secondProcess] = await Promise.all([first, stopSecond()]);

    const inSweep = (s: WriteSample): boolean =>
      sweepWindows.some(([from, to]) => s.dueAt >= from && s.dueAt < to);
    const split = (samples: WriteSample[]) => {
      const measured = samples.filter((s) => s.dueAt >= measuredFrom);
      return {
        quiet: stats(measured.filter((s) => !inSweep(s))),
        sweeping: stats(measured.filter(inSweep)),
      };
    };
    const a = split(inProcess);
    const b = split(secondProcess);
    const steps = [...stepTimes].sort((x, y) => x - y);
    return {
      rows,
      sweepSeconds: sweepMs / 1000,
      swept: { tombstoned, deleted },
      steps: {
        count: steps.length,
        p50Ms: quantile(steps, 0.5),
        p99Ms: quantile(steps, 0.99),
        maxMs: steps.at(-1) ?? 0,
      },
      windows: sweepWindows.length,
      quiet: { inProcess: a.quiet, secondProcess: b.quiet },
      sweeping: { inProcess: a.sweeping, secondProcess: b.sweeping },
    };
  } finally {
    await place.close();
  }
}

/** What the sweep did before bounded steps: every due row in one transaction, writers running. */
export async function sweepInOneTransaction(
  make: () => Place,
  rows: number,
): Promise<{ seconds: number; inProcess: WindowStats; secondProcess: WindowStats }> {
  const place = make();
  try {
    await place.store.ready?.();
    const now = Date.now();
    await place.load('current', 'oncely_ledger', {
      from: 0,
      to: rows,
      expiresFrom: now - 3_600_000,
      spreadMs: 3_600_000,
    });
    const stopSecond = await secondWriter(place);
    let done = false;
    const first = writeUntil(place.store, 'first', () => done);
    const from = epochMs();
    const tombstoneMs = createLedger({ store: place.store }).options.tombstoneMs;
    // Retried while another process holds the SQLite write lock.
    for (let swept: SweepResult = { tombstoned: 0, deleted: 0, busy: true }; swept.busy; )
      swept = await place.store.sweep(Date.now(), tombstoneMs);
    const to = epochMs();
    done = true;
    const [inProcess, secondProcess] = await Promise.all([first, stopSecond()]);
    const during = (samples: WriteSample[]) =>
      stats(samples.filter((s) => s.dueAt >= from && s.dueAt < to));
    return {
      seconds: (to - from) / 1000,
      inProcess: during(inProcess),
      secondProcess: during(secondProcess),
    };
  } finally {
    await place.close();
  }
}
