/**
 * Lets the event loop turn until `ready()` holds: for code that reaches a state (a sleep on a
 * VirtualClock, say) through a few turns of its own. Fails after `maxTurns`, never by time.
 */
export async function turnsUntil(ready: () => boolean, maxTurns = 1000): Promise<void> {
  for (let turn = 0; !ready(); turn++) {
    if (turn >= maxTurns) throw new Error(`not ready after ${maxTurns} turns of the event loop`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
