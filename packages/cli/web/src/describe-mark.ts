import type { Rule, WorldParams } from '@oncely/cli/sim/index.js';
import {
  storyOf,
  type AttemptPath,
  type DuplicateStory,
  type Mark,
  type MarkKind,
  type TimelineModel,
} from './timeline-model.js';

/** Legend names, in MARK_KINDS order. */
export const MARK_LABELS: { readonly [kind in MarkKind]: string } = {
  send: 'send',
  'request-lost': 'lost request',
  effect: 'effect',
  duplicate: 'duplicate effect',
  suppressed: 'suppressed repeat (replayed)',
  'receipt-lost': 'lost receipt',
  receipt: 'receipt reaches the sender',
};

/** One or two sentences about a mark, for the detail line under a timeline (and screen readers). */
export function describeMark(
  model: TimelineModel,
  mark: Mark,
  params: WorldParams,
  rule: Rule,
): string {
  const path = model.paths.find((p) => p.job === mark.job && p.attempt === mark.attempt)!;
  const who = `Job ${mark.job}, attempt ${mark.attempt}`;
  switch (mark.kind) {
    case 'send':
      return `${who}: sent at tick ${mark.tick}${mark.attempt > 1 ? ` (a retry: no receipt had reached the sender by then)` : ''}${fate(path)}`;
    case 'request-lost':
      return `${who}: the request was lost on the way (sent at tick ${mark.tick}). No effect, no receipt.`;
    case 'effect':
      return `${who}: arrived at tick ${mark.tick}; the receiver acted (the job's first effect)${rule.keyed ? ' and stored its key' : ''}.${receiptFate(path, model)}`;
    case 'duplicate': {
      const story = model.duplicates.find((s) => s.mark.id === mark.id);
      return story
        ? duplicateText(story, params)
        : `${who}: a duplicate effect at tick ${mark.tick}.`;
    }
    case 'suppressed':
      return `${who}: arrived at tick ${mark.tick}; its key was alive, so the receiver replayed the stored receipt instead of acting again.${receiptFate(path, model)}`;
    case 'receipt-lost': {
      const story = storyOf(model, mark);
      const then = story
        ? ` This swallowed receipt led to the duplicate effect at tick ${story.mark.tick}.`
        : '';
      return `${who}: the receipt was lost at tick ${mark.tick}. The work happened, but the sender never hears of it.${then}`;
    }
    case 'receipt': {
      const first = model.paths
        .filter((p) => p.job === mark.job && p.receiptAt !== undefined)
        .reduce((a, p) => Math.min(a, p.receiptAt!), Infinity);
      return first < mark.tick
        ? `${who}: a late receipt at tick ${mark.tick}; the job was already confirmed at tick ${first}.`
        : `${who}: the receipt reached the sender at tick ${mark.tick} (sent at tick ${path.sentAt}). Job confirmed.`;
    }
  }
}

/** The story of a duplicate: why the sender sent again and why the receiver acted again. */
export function duplicateText(story: DuplicateStory, params: WorldParams): string {
  const { path, previous } = story;
  const head = `Job ${path.job}, attempt ${path.attempt}: arrived at tick ${path.arrivedAt} and the receiver acted again, a duplicate effect.`;
  const sender =
    story.retryCause === 'receipt-lost'
      ? `Attempt ${previous.attempt} had taken effect at tick ${previous.arrivedAt}, but its receipt was lost, so at tick ${path.sentAt} the sender, still without a receipt, retried.`
      : story.retryCause === 'receipt-slow'
        ? `Attempt ${previous.attempt} had taken effect at tick ${previous.arrivedAt}; its receipt was still on its way (it arrived at tick ${previous.receiptAt ?? '—'}) when the sender retried at tick ${path.sentAt}.`
        : `Attempt ${previous.attempt} was still on its way when the sender retried at tick ${path.sentAt}; it took effect at tick ${previous.arrivedAt}.`;
  const receiver =
    story.receiverCause === 'no-key'
      ? 'The rule sends no key, so the receiver cannot tell a repeat from new work.'
      : story.receiverCause === 'keys-forgotten'
        ? `The receiver had forgotten its keys at tick ${params.forgetKeysAt}.`
        : `Its key, stored at tick ${previous.arrivedAt}, expired at tick ${(previous.arrivedAt ?? 0) + (params.retentionTicks ?? 0)} (retention ${params.retentionTicks} ticks).`;
  return `${head} ${sender} ${receiver}`;
}

/** Counts of duplicates by what made the sender retry, for a timeline's caption. */
export function duplicateSummary(model: TimelineModel): string {
  const n = model.duplicates.length;
  if (n === 0) return 'No duplicate effects.';
  const swallowed = model.duplicates.filter((s) => s.retryCause === 'receipt-lost').length;
  const slow = n - swallowed;
  const parts = [];
  if (swallowed > 0) parts.push(`${swallowed} after a swallowed receipt`);
  if (slow > 0) parts.push(`${slow} after a slow reply`);
  return `${n} duplicate effect${n === 1 ? '' : 's'}: ${parts.join(', ')}.`;
}

function fate(path: AttemptPath): string {
  if (path.requestLost) return '; the request was lost.';
  if (path.arrival === undefined) return '.';
  return `; it arrived at tick ${path.arrivedAt}.`;
}

function receiptFate(path: AttemptPath, model: TimelineModel): string {
  if (path.receiptLost) {
    const story = model.duplicates.find(
      (s) => s.previous === path && s.retryCause === 'receipt-lost',
    );
    return ` Its receipt was lost${story ? `, which led to the duplicate at tick ${story.mark.tick}` : ''}.`;
  }
  if (path.receiptAt !== undefined)
    return ` Its receipt reached the sender at tick ${path.receiptAt}.`;
  return ' Its receipt was still on its way when the run ended.';
}
