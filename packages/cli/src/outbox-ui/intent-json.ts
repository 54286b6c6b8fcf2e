import { PARKED_AT, type AttemptEntry, type IntentRecord, type ReplayResult } from 'oncely';
import { responseJson } from './attempt-json.js';

const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

/** How much of a payload or receipt the page shows: enough to recognise it. */
const PREVIEW_BYTES = 4096;

function preview(bytes: Uint8Array | null): string | null {
  if (bytes === null) return null;
  const text = new TextDecoder().decode(bytes.subarray(0, PREVIEW_BYTES));
  return bytes.byteLength > PREVIEW_BYTES ? `${text}…` : text;
}

/** One intent in a listing: what a row shows, times as ISO strings (UTC). */
export function intentSummary(intent: IntentRecord) {
  return {
    key: intent.key,
    method: intent.method,
    target: intent.target,
    endpoint: intent.endpoint ?? null,
    state: intent.state,
    attempts: intent.attemptCount,
    maxAttempts: intent.policy.maxAttempts,
    sawUnknown: intent.sawUnknown,
    createdAt: iso(intent.createdAt),
    // Parked (its endpoint paused or disabled): it waits for a person, not for an instant.
    parked: intent.state === 'pending' && intent.nextAttemptAt >= PARKED_AT,
    nextAttemptAt:
      intent.state === 'pending' && intent.nextAttemptAt < PARKED_AT
        ? iso(intent.nextAttemptAt)
        : null,
    finishedAt: iso(intent.outcome?.finishedAt),
    stopReason: intent.outcome?.stopReason ?? null,
    status: intent.outcome?.status ?? null,
    detail: intent.outcome?.detail ?? null,
  };
}

/** One attempt on the timeline: when, how long, what came back (its headers and first 4 KiB). */
export function attemptJson(attempt: AttemptEntry) {
  return {
    attempt: attempt.attempt,
    worker: attempt.worker,
    startedAt: iso(attempt.startedAt),
    endedAt: iso(attempt.endedAt),
    // The request's own time when the journal has it (a throttle wait left out), else start to end.
    durationMs:
      attempt.durationMs ?? (attempt.endedAt === null ? null : attempt.endedAt - attempt.startedAt),
    outcome: attempt.outcome,
    status: attempt.status,
    detail: attempt.detail,
    delayMs: attempt.delayMs,
    response: responseJson(attempt.response),
  };
}

/** One intent whole: the summary, what it sends (secrets are never written), its receipt, its attempts. */
export function intentDetail(intent: IntentRecord, attempts: readonly AttemptEntry[]) {
  return {
    ...intentSummary(intent),
    createdBy: intent.createdBy,
    deadlineAt: iso(intent.deadlineAt),
    headers: intent.headers,
    secretHeaders: intent.secretHeaders,
    payload: preview(intent.body),
    payloadBytes: intent.body.byteLength,
    receipt: preview(intent.outcome?.body ?? null),
    attemptList: attempts.map(attemptJson),
  };
}

/** A replay's answer, the same from the outbox view and the outbox API. */
export function replayResultJson(result: ReplayResult, dryRun: boolean) {
  return {
    dryRun,
    selected: result.selected.map(intentSummary),
    reopened: result.reopened,
    skipped: result.skipped,
  };
}
