/** One step of a recorded chain: a property read, or a call of what the last step read. */
type Step = { readonly get: PropertyKey } | { readonly call: readonly unknown[] };

/** The chain each recorder stands for, to replay it on the real object. */
const chains = new WeakMap<object, readonly Step[]>();

/**
 * A stand-in for an object that does not exist yet: property reads and calls on it are recorded,
 * and awaiting the result replays the chain on the real object once `resolve` gives it. So
 * `await tx.insertInto('orders').values(row).execute()` on a Kysely transaction that has not
 * begun yet begins it (resolve), then runs the same calls on it. A recorder passed as an argument
 * (`tx.fn.count('id')`) is replayed on the real object too.
 *
 * What it cannot stand for: a synchronous value read before the first await (`tx.isTransaction`
 * is a recorder, not a boolean). The ORM transaction handles use it only until their transaction
 * has begun; from then on they forward to the real object (orm-transaction.ts).
 */
export function recorder(resolve: () => Promise<object>, steps: readonly Step[]): unknown {
  const replayed = (): Promise<unknown> => resolve().then((real) => replay(real, steps));
  // A function target, so that a call (Knex's `trx('orders')`) can be recorded too.
  const proxy: object = new Proxy(function stand() {}, {
    get(_target, prop) {
      if (prop === 'then')
        return (ok?: (v: unknown) => unknown, fail?: (e: unknown) => unknown) =>
          replayed().then(ok, fail);
      if (prop === 'catch') return (fail?: (e: unknown) => unknown) => replayed().catch(fail);
      if (prop === 'finally') return (f?: () => void) => replayed().finally(f);
      return recorder(resolve, [...steps, { get: prop }]);
    },
    apply(_target, _this, args: unknown[]) {
      return recorder(resolve, [...steps, { call: args }]);
    },
  });
  chains.set(proxy, steps);
  return proxy;
}

/** Runs `steps` on `real`: reads and calls with the same arguments, recorders among them replayed. */
export function replay(real: object, steps: readonly Step[]): unknown {
  let value: unknown = real;
  let self: unknown = undefined;
  for (const step of steps) {
    if ('get' in step) {
      self = value;
      value = (value as Record<PropertyKey, unknown>)[step.get];
    } else {
      const args = step.call.map((a) => replayArgument(real, a));
      value = (value as (...a: unknown[]) => unknown).apply(self, args);
      self = undefined;
    }
  }
  return value;
}

function replayArgument(real: object, arg: unknown): unknown {
  if ((typeof arg !== 'function' && typeof arg !== 'object') || arg === null) return arg;
  const steps = chains.get(arg);
  return steps === undefined ? arg : replay(real, steps);
}
