import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  abortNodeRequest,
  PROBLEMS,
  problemDetails,
  retryAfterSeconds,
  type ProblemKind,
} from 'oncely/http';
import { PROBLEM_JSON, systemClock } from 'oncely';

type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** How a shutdown drains: the bounds, in real time (the grace is for real sockets, whatever the app's clock). */
export interface DrainOptions {
  /** How long requests in flight may still run before they are answered 503 and rolled back. */
  readonly graceMs: number;
  /** How long nothing new must arrive, once none is in flight, before the server stops answering. */
  readonly settleMs: number;
}

/**
 * The door of `oncely serve`: counts the requests in flight, and runs the shutdown so that no
 * request gets a bare reset. During the drain the server keeps answering: a new request (on a new
 * or a kept-alive connection) gets 503 problem+json with Retry-After and `Connection: close`, and
 * every answer in flight closes its connection. At the end of the grace, requests still running
 * are answered the same 503 and their Request is aborted, so their transaction rolls back.
 */
export interface RequestGate {
  readonly listener: NodeListener;
  inFlight(): number;
  /** The response a socket is producing now, for a refusal the parser raises mid-request (a timeout). */
  responseOn(socket: Socket): ServerResponse | undefined;
  /**
   * Answers `res` in place of its handler, whose Request is aborted (its transaction rolls back);
   * the connection closes after the answer. False when the handler had started answering already.
   */
  answerInstead(res: ServerResponse, kind: ProblemKind, detail: string): boolean;
  /** Drains; resolves true when every request finished by itself, false when some were cut. */
  drain(options: DrainOptions): Promise<boolean>;
}

/** Retry-After of a 503 while shutting down: the server, or its replacement, should be back soon. */
const SHUTDOWN_RETRY_AFTER_MS = 1000;
/** How long cut requests get to send their 503 before their connections are closed anyway. */
const CUT_FLUSH_MS = 1000;

export function createRequestGate(
  inner: NodeListener,
  onRefused: (req: IncomingMessage, status: number) => void,
): RequestGate {
  const inFlight = new Map<ServerResponse, Socket>();
  const bySocket = new WeakMap<Socket, ServerResponse>();
  let closing = false;
  let started = 0;
  const idleWaiters = new Set<() => void>();

  const track = (req: IncomingMessage, res: ServerResponse): void => {
    started++;
    inFlight.set(res, req.socket);
    bySocket.set(req.socket, res);
    res.once('close', () => {
      inFlight.delete(res);
      if (bySocket.get(req.socket) === res) bySocket.delete(req.socket);
      if (inFlight.size === 0) for (const wake of idleWaiters) wake();
    });
  };

  const answerInstead: RequestGate['answerInstead'] = (res, kind, detail) => {
    if (res.headersSent || res.writableEnded) return false;
    abortNodeRequest(res, { status: PROBLEMS[kind].status, code: kind, detail });
    writeProblem(res, kind, detail);
    return true;
  };

  const listener: NodeListener = (req, res) => {
    track(req, res);
    if (closing) {
      onRefused(req, 503);
      req.resume(); // read and drop the body, so closing the connection resets nothing
      writeProblem(
        res,
        'shutting_down',
        'the server is shutting down; retry shortly (with the same key)',
      );
      return;
    }
    inner(req, res);
  };

  const untilIdle = (deadlineAt: number): Promise<void> => {
    if (inFlight.size === 0) return Promise.resolve();
    const timer = new AbortController();
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        idleWaiters.delete(wake);
        timer.abort();
        resolve();
      };
      idleWaiters.add(wake);
      systemClock
        .sleep(Math.max(0, deadlineAt - systemClock.now()), timer.signal)
        .then(wake, () => {});
    });
  };

  async function drain({ graceMs, settleMs }: DrainOptions): Promise<boolean> {
    closing = true;
    // Answers already under way close their connections (RFC 9112 section 9.6).
    for (const res of inFlight.keys()) if (!res.headersSent) res.setHeader('connection', 'close');
    const deadlineAt = systemClock.now() + graceMs;
    for (;;) {
      await untilIdle(deadlineAt);
      if (systemClock.now() >= deadlineAt) break;
      // Idle: wait until nothing new has come for settleMs, so a request already on its way
      // (accepted, or queued by the kernel) is answered rather than reset by the closing socket.
      const seen = started;
      await systemClock.sleep(Math.min(settleMs, Math.max(0, deadlineAt - systemClock.now())));
      if (inFlight.size === 0 && started === seen) return true;
      if (systemClock.now() >= deadlineAt) break;
    }
    if (inFlight.size === 0) return true;
    for (const res of [...inFlight.keys()]) {
      answerInstead(
        res,
        'shutting_down',
        'the server stopped before this request finished; it was rolled back: retry it with the same key',
      );
    }
    await untilIdle(systemClock.now() + CUT_FLUSH_MS);
    return false;
  }

  return {
    listener,
    inFlight: () => inFlight.size,
    responseOn: (socket) => bySocket.get(socket),
    answerInstead,
    drain,
  };
}

/**
 * Writes a problem as the whole answer, at once (no await: the handler must not start its own
 * answer in between), and closes the connection after it. A 503 says when to come back.
 */
function writeProblem(res: ServerResponse, kind: ProblemKind, detail: string): void {
  if (res.headersSent || res.writableEnded) return;
  const details = problemDetails(kind, detail);
  const body = Buffer.from(JSON.stringify(details));
  res.statusCode = details.status;
  res.setHeader('content-type', PROBLEM_JSON);
  res.setHeader('cache-control', 'no-store');
  if (details.status === 503)
    res.setHeader('retry-after', String(retryAfterSeconds(SHUTDOWN_RETRY_AFTER_MS)));
  res.setHeader('content-length', body.byteLength);
  res.setHeader('connection', 'close');
  res.end(body);
}
