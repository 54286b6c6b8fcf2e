import { AsyncLocalStorage } from 'node:async_hooks';
import {
  HEADER,
  type Ledger,
  type ExecuteKind,
  type ExecuteResult,
  systemClock,
  type Clock,
} from 'oncely';
import { answeredInsteadStatus, type ConnectionControl, type FetchHandler } from 'oncely/http';
import type { HitAnswer } from '../receivers/hook/hook-service.js';

/**
 * What the ledger (or the hook receiver) made of a request: a new effect, a replayed receipt, a
 * key reused with another payload, a duplicate while the first is in flight, or none of these
 * (a read, a refusal before the ledger, an outage).
 */
export const REQUEST_OUTCOMES = ['new', 'replay', 'conflict', 'in-flight', 'none'] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];

/** One structured line per request. */
export interface RequestLogLine {
  /** When the request arrived, RFC 3339. */
  readonly at: string;
  readonly method: string;
  readonly path: string;
  /** The Idempotency-Key header as sent (cut at 300 characters), or null. */
  readonly key: string | null;
  /** The authenticated caller, or null. */
  readonly caller: string | null;
  /** The status sent; null when the connection was dropped without a reply. */
  readonly status: number | null;
  readonly durationMs: number;
  readonly outcome: RequestOutcome;
  /** Present when a fault dropped the connection after the work committed. */
  readonly dropped?: true;
}

const OUTCOME_OF_EXECUTE: Record<ExecuteKind, RequestOutcome> = {
  executed: 'new',
  replayed: 'replay',
  conflict: 'conflict',
  in_flight: 'in-flight',
  lease_lost: 'in-flight',
  not_stored: 'none',
  unavailable: 'none',
};

const OUTCOME_OF_HIT: Record<HitAnswer, RequestOutcome> = {
  completed: 'new',
  swallowed: 'new',
  replayed: 'replay',
  key_reused: 'conflict',
  rejected: 'none',
  key_invalid: 'none',
  too_large: 'none',
  in_flight: 'in-flight',
  unavailable: 'none',
  failed: 'none',
};

/** Longest key written to the log: a 10 kB header must not make a 10 kB log line. */
const MAX_LOGGED_KEY = 300;

export interface RequestLogOptions {
  /** Receives each line (JSON, without the newline). @default nothing */
  readonly write?: (line: string) => void;
  /** Times each request. @default systemClock */
  readonly clock?: Clock;
}

interface Notes {
  caller: string | null;
  outcome: RequestOutcome;
  dropped: boolean;
}

export interface RequestLog {
  /** Wraps the app's handler: one line per request once its response (or its drop) is decided. */
  wrap(handler: FetchHandler): FetchHandler;
  /** The same ledger, telling the log what each `execute` answered. */
  observe<Tx>(ledger: Ledger<Tx>): Ledger<Tx>;
  /** Annotates the current request's line, from anywhere below `wrap` (the auth, the hook receiver). */
  note(fields: { readonly caller?: string; readonly outcome?: RequestOutcome }): void;
  /** For the hook receiver's `onHit`. */
  noteHit(answer: HitAnswer): void;
  /** Also hands every finished line to `listener` (the metrics). */
  listen(listener: (line: RequestLogLine) => void): void;
  /**
   * The line of a request no handler saw: refused at the edge (a bad Host or target, TRACE, a
   * 503 while shutting down). `target` is the request target as sent, cut like a key.
   */
  refused(request: {
    readonly method: string;
    readonly target: string;
    readonly status: number;
  }): void;
}

/** The notes of the requests under way in this async context: the innermost log's first. */
interface Frame {
  readonly log: object;
  readonly notes: Notes;
  readonly outer: Frame | undefined;
}

/**
 * One AsyncLocalStorage for every request log of the process. Node keeps each storage that has
 * run in a list it walks for every promise and callback created, until the storage's disable(),
 * for the rest of the process: a storage per log left one more walk on every later promise for
 * each server a process ever started (a test process starts dozens).
 */
const frames = new AsyncLocalStorage<Frame>();

/** The notes of `log`'s request under way here, if any. */
function notesOf(log: object): Notes | undefined {
  for (let frame = frames.getStore(); frame; frame = frame.outer) {
    if (frame.log === log) return frame.notes;
  }
  return undefined;
}

/**
 * The request log. A request's line is filled in by the layers that know each part (the ledger
 * its outcome, the auth its caller) through an AsyncLocalStorage scoped to that request, so no
 * layer has to return more than its Response. Each log sees its own requests' notes only.
 */
export function createRequestLog(options: RequestLogOptions = {}): RequestLog {
  const write = options.write ?? (() => {});
  const clock = options.clock ?? systemClock;
  const self = {};
  const listeners: Array<(line: RequestLogLine) => void> = [];

  const note: RequestLog['note'] = (fields) => {
    const notes = notesOf(self);
    if (!notes) return;
    if (fields.caller !== undefined) notes.caller = fields.caller;
    if (fields.outcome !== undefined) notes.outcome = fields.outcome;
  };

  return {
    note,
    noteHit: (answer) => note({ outcome: OUTCOME_OF_HIT[answer] }),
    listen: (listener) => void listeners.push(listener),
    refused({ method, target, status }) {
      const line: RequestLogLine = {
        at: new Date(clock.now()).toISOString(),
        method,
        path: target.slice(0, MAX_LOGGED_KEY),
        key: null,
        caller: null,
        status,
        durationMs: 0,
        outcome: 'none',
      };
      write(JSON.stringify(line));
      for (const listener of listeners) listener(line);
    },
    observe: (ledger) => {
      const noted = async (answer: Promise<ExecuteResult>): Promise<ExecuteResult> => {
        const result = await answer;
        note({ outcome: OUTCOME_OF_EXECUTE[result.kind] });
        return result;
      };
      return {
        ...ledger,
        execute: (request, effect) => noted(ledger.execute(request, effect)),
        executeDeferred: (request, effect) => noted(ledger.executeDeferred(request, effect)),
      };
    },
    wrap: (handler) => async (request, connection) => {
      const startedAt = clock.now();
      const notes: Notes = { caller: null, outcome: 'none', dropped: false };
      const watched: ConnectionControl | undefined = connection && {
        drop() {
          notes.dropped = true;
          connection.drop();
        },
      };
      let status: number | null = 500;
      try {
        const frame: Frame = { log: self, notes, outer: frames.getStore() };
        const response = await frames.run(frame, () => handler(request, watched));
        status = response.status;
        return response;
      } finally {
        const key = request.headers.get(HEADER.idempotencyKey);
        const line: RequestLogLine = {
          at: new Date(startedAt).toISOString(),
          method: request.method,
          path: new URL(request.url).pathname,
          key: key === null ? null : key.slice(0, MAX_LOGGED_KEY),
          caller: notes.caller,
          // What the client got: the server's own answer when it answered for the handler (a 408, a 503).
          status: notes.dropped ? null : (answeredInsteadStatus(request.signal) ?? status),
          durationMs: clock.now() - startedAt,
          outcome: notes.outcome,
          ...(notes.dropped ? { dropped: true as const } : {}),
        };
        write(JSON.stringify(line));
        for (const listener of listeners) listener(line);
      }
    },
  };
}
