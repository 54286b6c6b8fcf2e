/**
 * Runs `fn` once the event loop has turned: after the microtasks queued now and the I/O callbacks
 * that are due (setImmediate; a 0 ms timer where there is none). Not a wait on a Clock: it defers
 * bookkeeping (deadline-sweep.ts arms its timer there), and no instant depends on it.
 */
export function afterThisTurn(fn: () => void): void {
  if (typeof setImmediate === 'function') setImmediate(fn);
  else setTimeout(fn, 0);
}
