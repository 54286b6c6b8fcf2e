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
 * its row with its writer's clock (recorded: createdAt; retried or deferred: later; reopened:
 * now), so the mark stays `SLACK_MS` behind the claim's own instant: a write that commits within
 * that of its stamp, on a clock no further behind, is above it. A write later than that but
 * within `WIDE_SLACK_MS` is found by the wide claim, which starts that far behind, every
 * `WIDE_SCAN_EVERY_MS`; anything else (a clock far behind, a transaction open longer) by the
 * claim that starts from the beginning of the index every `FULL_SCAN_EVERY_MS` of the worker's
 * clock (and by the first claim). Missing a row only delays it, never loses it; a claim still
 * takes a row only if it is pending, due and free.
 *
 * The tiers are what a held-back VACUUM costs: the walk of a claim is the dead entries in its
 * range, so a scan from the start once a second grew with the whole history since the oldest
 * snapshot (a 5-minute hold: 100,000 entries a claim, twice, claim and mark), where the wide claim
 * walks `WIDE_SLACK_MS` of it and the full one that history once a minute.
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
/** Before every row: the start of the index. */
export const INDEX_START: ClaimPosition = { at: Number.MIN_SAFE_INTEGER, seq: 0 };

export interface ClaimMark {
  /**
   * Where the claim at `nowMs` starts: the index's start when a full scan is due, else
   * `WIDE_SLACK_MS` before `nowMs` (or the mark, if lower) when a wide one is, else the mark.
   */
  startFor(nowMs: number): ClaimPosition;
  /**
   * After a claim at `nowMs` that started at `from`: the lowest pending row it saw at or after
   * `from` (undefined: none), so the next claim starts there, or `SLACK_MS` before `nowMs`.
   */
  advance(nowMs: number, from: ClaimPosition, lowest: ClaimPosition | undefined): void;
  /** The mark itself: where the store's next-due reading starts, as claims do. */
  position(): ClaimPosition;
  /** A pending row was found below the mark: the next claim starts from the index's start. */
  scanAllNext(): void;
}

const before = (a: ClaimPosition, b: ClaimPosition): boolean =>
  a.at < b.at || (a.at === b.at && a.seq < b.seq);

/** One store's mark, kept in memory: a new process starts with a full scan. */
export function createClaimMark(): ClaimMark {
  let mark = INDEX_START;
  let lastFullScanAt: number | undefined;
  let lastWideScanAt: number | undefined;
  // A clock that went back counts as a scan due, too.
  const due = (last: number | undefined, nowMs: number, everyMs: number): boolean =>
    last === undefined || nowMs < last || nowMs - last >= everyMs;
  return {
    startFor(nowMs) {
      if (due(lastFullScanAt, nowMs, FULL_SCAN_EVERY_MS)) {
        lastFullScanAt = lastWideScanAt = nowMs;
        return INDEX_START;
      }
      if (!due(lastWideScanAt, nowMs, WIDE_SCAN_EVERY_MS)) return mark;
      lastWideScanAt = nowMs;
      const wide: ClaimPosition = { at: nowMs - WIDE_SLACK_MS, seq: 0 };
      return before(wide, mark) ? wide : mark;
    },
    advance(nowMs, from, lowest) {
      const behind: ClaimPosition = { at: nowMs - SLACK_MS, seq: 0 };
      const next = lowest !== undefined && before(lowest, behind) ? lowest : behind;
      // A clock that went back would put the mark behind where this claim began: no gain there.
      mark = before(next, from) ? from : next;
    },
    position: () => mark,
    scanAllNext() {
      lastFullScanAt = undefined;
    },
  };
}
