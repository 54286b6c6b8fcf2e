import { InvalidOptionError, systemClock, type Clock } from 'oncely';
import type { ServiceDatabase } from './sql/service-database.js';

/** What every receiver (dropbox, notes) is built from besides its ledger. */
export interface ReceiverDeps<Tx> {
  readonly db: ServiceDatabase<Tx>;
  readonly scopeOf: (request: Request) => string | undefined;
  readonly clock?: Clock;
}

/**
 * Checks the options the receivers share, once, at the edge: each error names the option and
 * what it takes. Returns them with the clock defaulted.
 */
export function checkReceiverDeps<Tx>(
  deps: ReceiverDeps<Tx>,
  shape: string,
): { db: ServiceDatabase<Tx>; scopeOf: ReceiverDeps<Tx>['scopeOf']; clock: Clock } {
  if (typeof deps !== 'object' || deps === null) throw new InvalidOptionError('deps', deps, shape);
  const { db, scopeOf } = deps;
  if (typeof db?.within !== 'function' || typeof db.transaction !== 'function')
    throw new InvalidOptionError(
      'db',
      db,
      'a ServiceDatabase (sqliteServiceDatabase or postgresServiceDatabase)',
    );
  if (typeof scopeOf !== 'function')
    throw new InvalidOptionError('scopeOf', scopeOf, 'a function (request) => caller | undefined');
  const clock = deps.clock ?? systemClock;
  if (typeof clock.now !== 'function')
    throw new InvalidOptionError('clock', clock, 'a Clock with now()');
  return { db, scopeOf, clock };
}
