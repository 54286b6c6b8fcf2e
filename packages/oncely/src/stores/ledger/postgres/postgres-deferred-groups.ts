import { InvalidOptionError } from '../../../contract/errors.js';
import type { DeferredMember, DeferredCommitOutcome } from './postgres-deferred.js';

/** How concurrent deferred commits share transactions (the PostgreSQL store's `deferredGroups`). */
export interface DeferredGroupOptions {
  /** The most requests one transaction commits. 1 commits every request alone. @default 32 */
  readonly maxRequests?: number;
  /** How many such transactions are on their way at once. @default 2 */
  readonly inFlight?: number;
}

export const DEFAULT_DEFERRED_GROUP_OPTIONS = { maxRequests: 32, inFlight: 2 } as const;

/** Commits members in one transaction (postgres-deferred.ts). */
export type CommitMembers = (members: readonly DeferredMember[]) => Promise<DeferredCommitOutcome>;

interface Waiting {
  readonly member: DeferredMember;
  readonly identity: string;
  /** Held back once because its key was on its way already: it will find a row, so it goes alone. */
  alone: boolean;
  readonly resolve: (committed: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit for deferred writes: the deferred commits that arrive while `inFlight`
 * transactions are on their way wait, and go together as the next transaction (every member's
 * row in one statement, then every member's writes, one commit) as soon as one of those is
 * answered. A commit made while a slot is free goes after this turn of the event loop, with those
 * that arrived in the same turn, so a lone request waits for no other. Under load the requests
 * share the commit, the WAL flush and one statement for all their rows: what a deferred request
 * cost beyond its own writes (docs/performance.md).
 *
 * A group commits whole or not at all, so one member's failure would be every member's. When
 * members' keys had a row (retries answered by another process), those members lose (the ledger
 * goes the claimed way for them) and the others go again, together. When a group fails (a write,
 * a deadlock, a lost connection), every member is committed again alone, and each gets its own
 * answer, exactly as if it had never been grouped. A group that lost its connection at COMMIT may
 * have committed: a member sent again then finds its own row and loses, and the ledger replays
 * the receipt it wrote.
 *
 * Two commits of one key never share a group, nor run at once: the second waits for the first's
 * transaction and then goes alone (it will find the first's row and lose, which would fail a group).
 */
export function deferredGroups(
  commit: CommitMembers,
  options: DeferredGroupOptions = {},
): { commit(member: DeferredMember): Promise<boolean> } {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('deferredGroups', options, 'an object { maxRequests, inFlight }');
  const maxRequests = whole('maxRequests', options.maxRequests, 1, 1000);
  const inFlight = whole('inFlight', options.inFlight, 1, 100);
  const waiting: Waiting[] = [];
  /** Identities of the members whose transaction is on its way. */
  const onTheirWay = new Set<string>();
  let running = 0;
  let startQueued = false;

  /**
   * Starts the waiting groups after the I/O callbacks of this turn of the event loop
   * (setImmediate), so that requests that arrived together go together even while a slot is free.
   */
  function queueStart(): void {
    if (startQueued) return;
    startQueued = true;
    setImmediate(() => {
      startQueued = false;
      startAll();
    });
  }

  function startAll(): void {
    while (running < inFlight && waiting.length > 0) {
      const group = takeGroup(waiting, onTheirWay, maxRequests);
      if (group.length === 0) return; // every waiting member's key is on its way
      running++;
      for (const w of group) onTheirWay.add(w.identity);
      void run(group).finally(() => {
        running--;
        for (const w of group) onTheirWay.delete(w.identity);
        startAll();
      });
    }
  }

  async function run(group: readonly Waiting[]): Promise<void> {
    if (group.length === 1) return alone(group[0]!);
    let outcome: DeferredCommitOutcome | undefined;
    try {
      outcome = await commit(group.map((w) => w.member));
    } catch {
      // Whose failure it was, and whether the rest would have committed, is found out alone.
      await Promise.all(group.map(alone));
      return;
    }
    if (outcome.committed) {
      for (const w of group) w.resolve(true);
      return;
    }
    // Keys that had a row (a retry another process answered): those lose, the rest go again.
    const found = new Set(outcome.found);
    for (const i of found) group[i]?.resolve(false);
    const rest = group.filter((_, i) => !found.has(i));
    if (rest.length < group.length) await run(rest);
    else await Promise.all(group.map(alone));
  }

  async function alone(w: Waiting): Promise<void> {
    try {
      w.resolve((await commit([w.member])).committed);
    } catch (error) {
      w.reject(error);
    }
  }

  return {
    commit: (member) =>
      new Promise<boolean>((resolve, reject) => {
        const identity = `${member.entry.scope}\u001f${member.entry.key}`;
        waiting.push({ member, identity, alone: false, resolve, reject });
        queueStart();
      }),
  };
}

/**
 * Takes from `waiting`, in arrival order, the members that may go together now: at most
 * `maxRequests`, none whose key is on its way or already in the group (those go alone, later).
 */
function takeGroup(
  waiting: Waiting[],
  onTheirWay: ReadonlySet<string>,
  maxRequests: number,
): Waiting[] {
  const group: Waiting[] = [];
  const inGroup = new Set<string>();
  for (let i = 0; i < waiting.length && group.length < maxRequests; ) {
    const w = waiting[i]!;
    if (onTheirWay.has(w.identity) || inGroup.has(w.identity)) {
      w.alone = true;
      i++;
      continue;
    }
    if (w.alone) {
      if (group.length > 0) {
        i++;
        continue;
      }
      waiting.splice(i, 1);
      return [w];
    }
    waiting.splice(i, 1);
    group.push(w);
    inGroup.add(w.identity);
  }
  return group;
}

function whole(
  name: keyof DeferredGroupOptions,
  value: number | undefined,
  min: number,
  max: number,
): number {
  const n = value ?? DEFAULT_DEFERRED_GROUP_OPTIONS[name];
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new InvalidOptionError(
      `deferredGroups.${name}`,
      value,
      `a whole number from ${min} to ${max}`,
    );
  return n;
}
