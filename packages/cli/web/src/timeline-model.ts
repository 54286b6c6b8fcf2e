import type { Rule, TraceEvent, WorldParams } from '@oncely/cli/sim/index.js';

/**
 * What the timeline draws, rebuilt from a run's trace (apps/sim/trace.ts): one path per attempt
 * (send → arrival → receipt) and the marks on it. Pure, so the stories it tells about duplicates
 * follow from the trace alone.
 */
export const MARK_KINDS = [
  'send',
  'request-lost',
  'effect',
  'duplicate',
  'suppressed',
  'receipt-lost',
  'receipt',
] as const;
export type MarkKind = (typeof MARK_KINDS)[number];

export interface AttemptPath {
  readonly job: number;
  readonly attempt: number;
  readonly sentAt: number;
  requestLost: boolean;
  /** When the request reached the receiver (undefined if lost). */
  arrivedAt?: number;
  arrival?: 'effect' | 'duplicate' | 'suppressed';
  receiptLost: boolean;
  /** When its receipt reached the sender (undefined if lost or never). */
  receiptAt?: number;
}

export interface Mark {
  /** Index in `marks`. */
  readonly id: number;
  readonly kind: MarkKind;
  readonly tick: number;
  readonly job: number;
  readonly attempt: number;
}

/** Why the sender retried a job that had already taken effect. */
export const RETRY_CAUSES = ['receipt-lost', 'receipt-slow', 'request-slow'] as const;
export type RetryCause = (typeof RETRY_CAUSES)[number];

/** Why the receiver acted again. */
export const RECEIVER_CAUSES = ['no-key', 'key-expired', 'keys-forgotten'] as const;
export type ReceiverCause = (typeof RECEIVER_CAUSES)[number];

/** A duplicate effect, with the earlier effect it repeats and why neither side stopped it. */
export interface DuplicateStory {
  readonly mark: Mark;
  readonly path: AttemptPath;
  /** The job's most recent effect before this one. */
  readonly previous: AttemptPath;
  readonly retryCause: RetryCause;
  readonly receiverCause: ReceiverCause;
}

export interface TimelineModel {
  readonly jobs: number;
  /** Ticks 0 … endTick − 1 are drawn. */
  readonly endTick: number;
  readonly paths: readonly AttemptPath[];
  /** Sorted by job, then tick, then path order. */
  readonly marks: readonly Mark[];
  readonly duplicates: readonly DuplicateStory[];
  /** Mark ids per job, in tick order. */
  readonly lanes: readonly (readonly number[])[];
}

export function buildTimeline(
  trace: readonly TraceEvent[],
  params: WorldParams,
  rule: Rule,
): TimelineModel {
  const paths: AttemptPath[] = [];
  const byAttempt = new Map<string, AttemptPath>();
  const effectsSoFar = new Array<number>(params.jobs).fill(0);
  const lastEffect = new Array<AttemptPath | undefined>(params.jobs).fill(undefined);
  const stories: { path: AttemptPath; previous: AttemptPath }[] = [];
  let lastTick = 0;
  for (const event of trace) {
    lastTick = Math.max(lastTick, event.tick);
    const id = `${event.job}/${event.attempt}`;
    if (event.kind === 'send') {
      const path: AttemptPath = {
        job: event.job,
        attempt: event.attempt,
        sentAt: event.tick,
        requestLost: false,
        receiptLost: false,
      };
      paths.push(path);
      byAttempt.set(id, path);
      continue;
    }
    const path = byAttempt.get(id);
    if (!path) continue;
    switch (event.kind) {
      case 'request-lost':
        path.requestLost = true;
        break;
      case 'effect': {
        path.arrivedAt = event.tick;
        const previous = lastEffect[event.job];
        path.arrival = effectsSoFar[event.job]! > 0 ? 'duplicate' : 'effect';
        if (previous && path.arrival === 'duplicate') stories.push({ path, previous });
        effectsSoFar[event.job]!++;
        lastEffect[event.job] = path;
        break;
      }
      case 'suppressed':
        path.arrivedAt = event.tick;
        path.arrival = 'suppressed';
        break;
      case 'receipt-lost':
        path.receiptLost = true;
        break;
      case 'confirmed':
        path.receiptAt = event.tick;
        break;
      case 'receipt-sent':
        break;
    }
  }

  const marks: Mark[] = [];
  const add = (kind: MarkKind, tick: number, path: AttemptPath): void => {
    marks.push({ id: 0, kind, tick, job: path.job, attempt: path.attempt });
  };
  for (const path of paths) {
    add('send', path.sentAt, path);
    if (path.requestLost) add('request-lost', path.sentAt, path);
    if (path.arrival !== undefined && path.arrivedAt !== undefined)
      add(path.arrival, path.arrivedAt, path);
    if (path.receiptLost && path.arrivedAt !== undefined) add('receipt-lost', path.arrivedAt, path);
    if (path.receiptAt !== undefined) add('receipt', path.receiptAt, path);
  }
  const order = new Map(MARK_KINDS.map((kind, i) => [kind, i]));
  marks.sort(
    (a, b) =>
      a.job - b.job ||
      a.tick - b.tick ||
      a.attempt - b.attempt ||
      order.get(a.kind)! - order.get(b.kind)!,
  );
  const numbered = marks.map((mark, id) => ({ ...mark, id }));
  const lanes: number[][] = Array.from({ length: params.jobs }, () => []);
  for (const mark of numbered) lanes[mark.job]!.push(mark.id);

  const duplicates = stories.map(({ path, previous }): DuplicateStory => {
    const mark = numbered.find(
      (m) => m.kind === 'duplicate' && m.job === path.job && m.attempt === path.attempt,
    )!;
    return {
      mark,
      path,
      previous,
      retryCause: retryCause(path, previous),
      receiverCause: receiverCause(path, previous, params, rule),
    };
  });
  // Draw to the end of the run, or at least to the horizon so worlds line up.
  const endTick = Math.max(lastTick + 1, params.horizonTicks);
  return { jobs: params.jobs, endTick, paths, marks: numbered, duplicates, lanes };
}

/**
 * The sender retries only an unconfirmed job, so when `path` was sent the earlier effect's
 * receipt had not arrived: it was lost (a swallowed receipt), or still on its way, or the earlier
 * request itself had not yet arrived.
 */
function retryCause(path: AttemptPath, previous: AttemptPath): RetryCause {
  if (previous.arrivedAt !== undefined && previous.arrivedAt > path.sentAt) return 'request-slow';
  return previous.receiptLost ? 'receipt-lost' : 'receipt-slow';
}

function receiverCause(
  path: AttemptPath,
  previous: AttemptPath,
  params: WorldParams,
  rule: Rule,
): ReceiverCause {
  if (!rule.keyed) return 'no-key';
  const storedAt = previous.arrivedAt ?? 0;
  const arrivedAt = path.arrivedAt ?? 0;
  if (
    params.forgetKeysAt !== null &&
    params.forgetKeysAt > storedAt &&
    params.forgetKeysAt <= arrivedAt
  )
    return 'keys-forgotten';
  return 'key-expired';
}

/** The marks a story ties together: the earlier effect, its lost receipt, the retry's send. */
export function relatedMarks(model: TimelineModel, story: DuplicateStory): Mark[] {
  const { previous, path } = story;
  return model.marks.filter(
    (m) =>
      m.job === path.job &&
      ((m.attempt === previous.attempt &&
        (m.kind === 'effect' ||
          m.kind === 'duplicate' ||
          m.kind === 'receipt-lost' ||
          m.kind === 'receipt')) ||
        (m.attempt === path.attempt && m.kind === 'send')),
  );
}

/** The duplicate story whose mark, earlier effect or lost receipt this is, if any. */
export function storyOf(model: TimelineModel, mark: Mark): DuplicateStory | undefined {
  return (
    model.duplicates.find((s) => s.mark.id === mark.id) ??
    model.duplicates.find(
      (s) =>
        s.path.job === mark.job &&
        s.previous.attempt === mark.attempt &&
        mark.kind === 'receipt-lost',
    )
  );
}
