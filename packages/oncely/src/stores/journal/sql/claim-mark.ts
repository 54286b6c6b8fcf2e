/**
 * Where a claim's index scan starts (PostgreSQL). A settled intent leaves its old row version's
 * entry in the claim's index, (next_attempt_at, seq) over pending rows, until VACUUM removes it;
 * while a long transaction holds VACUUM back, a claim from the start of the index walks all of
 * them, a heap visit each, to reach the first pending row. So each claim also reads the lowest
 * pending row at or after the mark it started from, and the next claim starts there.
 *
 * Why nothing is missed: a pending row never lies below the mark the claim that read it set,
 * since the mark is the lowest pending row (any lease, any turn, locked or not) in that claim's
 * snapshot. Only a row made pending after that snapshot can land below it, and a write stamps
 * its row with its writer's clock (recorded: createdAt; retried or deferred: later; reopened or
 * woken: now).
 *
 * - Heard: while the store LISTENs, every record's NOTIFY carries its row's position, sent when
 *   it commits. A position heard lowers the mark, and also the mark of every claim in flight
 *   (begun before it was heard, so its snapshot may lack the row) when that claim ends: the mark
 *   can then be the lowest pending row itself, or the claim's instant when none is. A NOTIFY
 *   without a position (a reopening, an endpoint woken, an older writer) lowers it `SLACK_MS`
 *   behind the latest claim's instant.
 * - Not listening (no worker watches, or the connection was lost): the mark stays `SLACK_MS`
 *   behind the claim's own instant, so a write that commits within that of its stamp, on a clock
 *   no further behind, is above it.
 *
 * A write missed so (not listening: a write committed later than that, or on a clock further
 * behind) is found by the wide claim, which starts `WIDE_SLACK_MS` behind every
 * `WIDE_SCAN_EVERY_MS`, or by the claim that starts from the beginning of the index every
 * `FULL_SCAN_EVERY_MS` of the worker's clock (and by the first claim). While listening, only a
 * write heard of without its position can be missed (committed more than `SLACK_MS` after its
 * stamp, or written by an oncely that sent none): they run every `HEARD_WIDE_SCAN_EVERY_MS` and
 * `HEARD_FULL_SCAN_EVERY_MS`. Missing a row only delays it, never loses it; a claim still takes
 * a row only if it is pending, due and free.
 *
 * The tiers are what a held-back VACUUM costs: the walk of a claim is the dead entries in its
 * range. Not listening, a claim walks the last `SLACK_MS` of settled intents (in a 2-minute hold
 * about 120 entries a delivery, claim and mark); listening, what was settled since the lowest
 * pending row; the wide claim walks `WIDE_SLACK_MS` of history and the full one all of it, each
 * at its period.
 */

/** A position in the claim's order: (next_attempt_at, seq). */
export interface ClaimPosition {
  readonly at: number;
  readonly seq: number;
}

/** Writes that commit within this long of their stamp (clocks this close) land above the mark. */
export const SLACK_MS = 2_000;
/** A claim from `WIDE_SLACK_MS` behind its `nowMs` (or the mark, if lower) this often. */
export const WIDE_SCAN_EVERY_MS = 1_000;
/** Writes that commit within this long of their stamp are found within `WIDE_SCAN_EVERY_MS`. */
export const WIDE_SLACK_MS = 10_000;
/** A claim from the start of the index at least this often, by the claim's `nowMs`. */
export const FULL_SCAN_EVERY_MS = 60_000;
/** The wide claim's period while listening: only a write not heard of needs it. */
export const HEARD_WIDE_SCAN_EVERY_MS = 10_000;
/** The full scan's period while listening. */
export const HEARD_FULL_SCAN_EVERY_MS = 300_000;
/** Before every row: the start of the index. */
export const INDEX_START: ClaimPosition = { at: Number.MIN_SAFE_INTEGER, seq: 0 };

/** A claim begun: where it starts, and what was heard while it ran (ClaimMark.startFor). */
export interface ClaimStart {
  readonly from: ClaimPosition;
  /** The lowest position heard since it began: rows its snapshot may lack. */
  heard: ClaimPosition | undefined;
  /** Listening when it began, and without a break since: heard positions cover its snapshot. */
  heardAll: boolean;
}

/** What the store's wake tells the mark (postgres-journal-wake.ts). */
export interface ClaimMarkHearing {
  /** A write committed that made a row pending at `position` (undefined: at an unknown one). */
  heard(position: ClaimPosition | undefined): void;
  /** Listening began (every later commit is heard) or stopped (commits may go unheard). */
  listening(on: boolean): void;
}

export interface ClaimMark extends ClaimMarkHearing {
  /**
   * Where the claim at `nowMs` starts: the index's start when a full scan is due, else
   * `WIDE_SLACK_MS` before `nowMs` (or the mark, if lower) when a wide one is, else the mark.
   * Pass what it returns to `advance` when the claim has read its rows.
   */
  startFor(nowMs: number): ClaimStart;
  /**
   * After a claim at `nowMs`: the lowest pending row it saw at or after where it started
   * (undefined: none), so the next claim starts there (or lower: claim-mark.ts says where).
   */
  advance(nowMs: number, start: ClaimStart, lowest: ClaimPosition | undefined): void;
  /** A claim that failed: it read nothing, but what was heard while it ran still counts. */
  abandon(start: ClaimStart): void;
  /** The mark itself: where the store's next-due reading starts, as claims do. */
  position(): ClaimPosition;
  /** A pending row was found below the mark: the next claim starts from the index's start. */
  scanAllNext(): void;
}

const before = (a: ClaimPosition, b: ClaimPosition): boolean =>
  a.at < b.at || (a.at === b.at && a.seq < b.seq);
const lower = (a: ClaimPosition, b: ClaimPosition | undefined): ClaimPosition =>
  b !== undefined && before(b, a) ? b : a;

/** One store's mark, kept in memory: a new process starts with a full scan. */
export function createClaimMark(): ClaimMark {
  let mark = INDEX_START;
  let lastFullScanAt: number | undefined;
  let lastWideScanAt: number | undefined;
  let latestNow: number | undefined;
  let listening = false;
  const inFlight = new Set<ClaimStart>();
  // Where a write heard of without its position, or not heard of, may have put its row.
  const unheard = (): ClaimPosition =>
    latestNow === undefined ? INDEX_START : { at: latestNow - SLACK_MS, seq: 0 };
  // A clock that went back counts as a scan due, too.
  const due = (last: number | undefined, nowMs: number, everyMs: number): boolean =>
    last === undefined || nowMs < last || nowMs - last >= everyMs;
  const startAt = (nowMs: number): ClaimPosition => {
    if (due(lastFullScanAt, nowMs, listening ? HEARD_FULL_SCAN_EVERY_MS : FULL_SCAN_EVERY_MS)) {
      lastFullScanAt = lastWideScanAt = nowMs;
      return INDEX_START;
    }
    if (!due(lastWideScanAt, nowMs, listening ? HEARD_WIDE_SCAN_EVERY_MS : WIDE_SCAN_EVERY_MS))
      return mark;
    lastWideScanAt = nowMs;
    return lower(mark, { at: nowMs - WIDE_SLACK_MS, seq: 0 });
  };
  return {
    startFor(nowMs) {
      latestNow = nowMs;
      const start: ClaimStart = { from: startAt(nowMs), heard: undefined, heardAll: listening };
      inFlight.add(start);
      return start;
    },
    advance(nowMs, start, lowest) {
      inFlight.delete(start);
      const behind: ClaimPosition = { at: nowMs - (start.heardAll ? 0 : SLACK_MS), seq: 0 };
      const next = lower(behind, lowest);
      // A clock that went back would put the mark behind where this claim began: no gain there.
      mark = lower(before(next, start.from) ? start.from : next, start.heard);
    },
    abandon(start) {
      inFlight.delete(start);
      mark = lower(mark, start.heard);
    },
    position: () => mark,
    scanAllNext() {
      lastFullScanAt = undefined;
    },
    heard(position) {
      const at = position ?? unheard();
      mark = lower(mark, at);
      for (const start of inFlight) start.heard = lower(at, start.heard);
    },
    listening(on) {
      listening = on;
      if (on) return;
      // Commits may go unheard from here (and those on their way were): the mark goes back to
      // where a claim not listening would have put it, and no claim in flight sets a tight one.
      const floor = unheard();
      mark = lower(mark, floor);
      for (const start of inFlight) {
        start.heardAll = false;
        start.heard = lower(floor, start.heard);
      }
    },
  };
}
