import { HEADER, keyFor, type SqlHandle } from 'oncely';
import { defineProblem, problemResponse } from 'oncely/http';
import { formatRetryAfter, hitOf, type Arrival } from './hook-arrival.js';
import { countHits, insertHit } from './hook-hits-table.js';
import type { ResolvedHookOptions } from './hook-options.js';
import {
  nextScriptAction,
  SCRIPT_START,
  type ScriptAction,
  type ScriptCursor,
} from './hook-script.js';

/** A scripted refusal: the status the script names, in the one problem+json shape. */
const scriptedRefusal = (status: number) =>
  defineProblem('scripted_refusal', status, 'Scripted refusal');

/** Answers arrivals from the script, each caller at its own position in it. */
export interface ScriptAnswers {
  /** Runs the script for one arrival; an ack and its hit are written with `sql` (the receipt's transaction when keyed). */
  answer(arrival: Arrival, sql: SqlHandle): Promise<Response>;
  /** Forgets a caller's position: its next arrival meets the script's start. */
  forget(scope: string): void;
}

export function createScriptAnswers<Tx>(options: ResolvedHookOptions<Tx>): ScriptAnswers {
  const { script, notifications, retryAfterFormat } = options;
  /** The script's position per caller. Kept by this process: it is the lab's scenery, not state to keep. */
  const cursors = new Map<string, ScriptCursor>();

  async function answer(arrival: Arrival, sql: SqlHandle): Promise<Response> {
    const scope = arrival.scope!;
    const [action, next] = nextScriptAction(script, cursors.get(scope) ?? SCRIPT_START, arrival.at);
    cursors.set(scope, next);
    if (action.kind === 'status' && (action.status < 200 || action.status >= 300))
      return refusal(arrival, action);
    const status = action.kind === 'swallow' ? 200 : action.status;
    const completion = (await countHits(sql, scope)).completions + 1;
    arrival.swallow = action.kind === 'swallow';
    arrival.outcome = { answer: arrival.swallow ? 'swallowed' : 'completed', status };
    arrival.hit = await insertHit(
      sql,
      scope,
      hitOf(arrival, arrival.outcome.answer, arrival.swallow ? null : status),
    );
    if (notifications) {
      const event = {
        event: 'hook.completed',
        scope,
        path: arrival.path,
        key: arrival.key,
        completion,
        at: arrival.at,
      };
      // Keyed by the arrival's own key when it has one, so a notification is owed once per key.
      const intentKey = keyFor(
        arrival.key === null ? { scope, seq: arrival.hit.seq } : { scope, key: arrival.key },
        'hook',
      );
      await notifications.journal.recordWithin(sql, {
        key: intentKey,
        target: notifications.target,
        body: JSON.stringify(event),
        headers: { 'content-type': 'application/json' },
        createdBy: 'oncely hook',
      });
    }
    const body =
      status === 204 || status === 205 ? null : JSON.stringify({ received: true, completion });
    return new Response(body, { status, headers: { [HEADER.contentType]: 'application/json' } });
  }

  function refusal(arrival: Arrival, action: Extract<ScriptAction, { kind: 'status' }>): Response {
    const retryAfter =
      action.retryAfterSeconds === undefined
        ? undefined
        : formatRetryAfter(action.retryAfterSeconds, arrival.at, retryAfterFormat);
    arrival.outcome =
      retryAfter === undefined
        ? { answer: 'rejected', status: action.status }
        : { answer: 'rejected', status: action.status, retryAfter };
    return problemResponse(
      scriptedRefusal(action.status),
      `hook script ${script.text} answers ${action.status} to this arrival`,
      {
        headers: retryAfter === undefined ? {} : { [HEADER.retryAfter]: retryAfter },
      },
    );
  }

  return { answer, forget: (scope) => cursors.delete(scope) };
}
