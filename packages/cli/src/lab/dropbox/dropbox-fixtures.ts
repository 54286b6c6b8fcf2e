import { VirtualClock, seededRandom, type RetryReport } from 'oncely';
import { InMemoryDropbox, type DropboxRow } from './in-memory-dropbox.js';
import { naiveRetry } from './naive-retry.js';
import { budgetedRetry } from './budgeted-retry.js';

export interface DropboxFixtures {
  readonly A: { readonly events: string[]; readonly store: DropboxRow[] };
  readonly B: {
    readonly events: string[];
    readonly store: DropboxRow[];
    readonly report: RetryReport;
  };
  readonly C: { readonly caught: string };
  readonly D: {
    readonly closesAt: number;
    readonly retryDelayMs: number;
    readonly events: string[];
    readonly store: DropboxRow[];
    readonly report: RetryReport;
    /** When the lookup ran: after the deadline, which a read-only lookup is allowed to. */
    readonly lookupAt: number;
    readonly lookup: DropboxRow | null;
  };
}

/** The seed's extension: the close time, an arbitrary fixed instant (2026-12-01T00:00:00Z). */
export const CLOSES_AT = Date.UTC(2026, 11, 1);
const STUDENT = 'achen';
const ASSIGNMENT = 'lab3';
const KEY = 'achen:lab3:v1';

/**
 * Runs the dropbox story's fixtures A–C and its extension D (docs/origins.md). Time is virtual and randomness seeded, so
 * every run prints the same facts.
 */
export async function runDropboxFixtures(): Promise<DropboxFixtures> {
  const naiveBox = new InMemoryDropbox({ swallowFirstAck: true });
  const A = { events: naiveRetry(naiveBox, STUDENT, ASSIGNMENT), store: naiveBox.dump() };

  const budgetBox = new InMemoryDropbox({ swallowFirstAck: true });
  const b = await budgetedRetry(budgetBox, STUDENT, ASSIGNMENT, {
    key: KEY,
    maxAttempts: 3,
    clock: new VirtualClock(),
    random: seededRandom(0),
  });
  const B = { events: b.events, store: budgetBox.dump(), report: b.report };

  let caught = '(nothing thrown)';
  try {
    await budgetedRetry(new InMemoryDropbox({ swallowFirstAck: false }), STUDENT, ASSIGNMENT, {
      key: ' ',
    });
  } catch (error) {
    caught = error instanceof Error ? error.message : String(error);
  }
  const C = { caught };

  return { A, B, C, D: await fixtureD() };
}

/**
 * The first ack is swallowed at closes_at − 1 s; the next attempt would start at closes_at + 1 s.
 * The deadline wins over the attempts left: the loop stops, the store keeps its one row, and a
 * read-only lookup after the close shows the first submission was accepted.
 */
async function fixtureD(): Promise<DropboxFixtures['D']> {
  const retryDelayMs = 2_000;
  const clock = new VirtualClock({ startAt: CLOSES_AT - 1_000 });
  const box = new InMemoryDropbox({
    swallowFirstAck: true,
    closesAt: CLOSES_AT,
    now: () => clock.now(),
  });
  const { events, report } = await budgetedRetry(box, STUDENT, ASSIGNMENT, {
    key: KEY,
    maxAttempts: 3,
    closesAt: CLOSES_AT,
    baseDelayMs: retryDelayMs,
    jitter: 'none',
    clock,
  });
  await clock.advanceTo(CLOSES_AT + 1_000);
  return {
    closesAt: CLOSES_AT,
    retryDelayMs,
    events,
    store: box.dump(),
    report,
    lookupAt: clock.now(),
    lookup: box.lookup(KEY) ?? null,
  };
}
