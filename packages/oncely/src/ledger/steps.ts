import { InvalidOptionError, OncelyError } from '../contract/errors.js';
import type { InFlightEntry } from './ledger-entry.js';
import type { ResolvedLedgerOptions } from './ledger-options.js';
import type { SqlHandle } from './sql-handle.js';
import { StepMismatchError } from './step-errors.js';
import { stepKeyOnNode } from './step-key-node.js';
import type { StepRecord, StepStore } from './step-store.js';

/** What a step's function is given. */
export interface StepContext<Tx> {
  /** The step's name, as called. */
  readonly name: string;
  /**
   * The key to send as the other service's own Idempotency-Key: the same on every retry of this
   * request, different for each step (contract/step-key.ts).
   */
  readonly key: string;
  /** The step's own transaction: its writes commit with its recovery point, or not at all. */
  readonly tx: Tx;
  /** The same transaction as a dialect-neutral SQL handle (rejects on a store without SQL). */
  readonly sql: SqlHandle;
}

/**
 * `step(name, fn)`: runs `fn` once per request. Its result is committed, with whatever `fn` wrote
 * in its transaction, before `step` resolves; a retry of the request gets the recorded result
 * without calling `fn`. The result travels as JSON (return plain data): the first run gets it
 * back through JSON too, so every run sees the same value. Await each step before the next.
 */
export type Step<Tx> = <T>(
  name: string,
  fn: (step: StepContext<Tx>) => T | Promise<T>,
) => Promise<T>;

/** Any UTF-16 surrogate (a name with one is checked at once: see #admit). */
const SURROGATE = /[\ud800-\udfff]/;

/** The longest step name, in characters. */
export const MAX_STEP_NAME_LENGTH = 200;

/** Thrown inside a step's transaction when another worker recorded the step first. */
class RecordedFirst {}

/**
 * The steps of one claimed run of a request. A fresh claim has no recorded steps (its run
 * began now), so it reads nothing; a takeover reads the run's steps once, at its first step.
 */
export class StepRunner<Tx> {
  readonly #o: ResolvedLedgerOptions<Tx>;
  readonly #owned: InFlightEntry;
  readonly #tookOver: boolean;
  #recorded: Map<number, StepRecord> | undefined;
  #position = 0;
  #running: string | undefined;
  readonly #names = new Set<string>();
  #committed = false;
  /** The request's own transaction, whose receipt comes after every step. */
  #requestTx: { readonly tx: Tx } | undefined;

  constructor(o: ResolvedLedgerOptions<Tx>, owned: InFlightEntry, tookOver: boolean) {
    this.#o = o;
    this.#owned = owned;
    this.#tookOver = tookOver;
  }

  /**
   * True when this run may have a recovery point: then a failure must keep the key (its lease
   * released) rather than delete it, or the next retry would begin a new run without them.
   */
  get mayHaveSteps(): boolean {
    return this.#o.steps !== undefined && (this.#committed || this.#tookOver);
  }

  /**
   * Just before the receipt, in the request's transaction `tx`: the run is over, and its steps
   * are the store's to drop (StepStore.forget), but only when this claim began the run. A run
   * taken over may still have its earlier owner running, whose next step must conflict with the
   * record already there (first writer wins) and roll back, not find the place free and run
   * its effect a second time; those records are left to the sweep.
   */
  beforeReceipt(tx: Tx): Promise<void> | undefined {
    const steps = this.#o.steps;
    if (steps === undefined || !this.#committed || this.#tookOver) return undefined;
    const { scope, key, firstSeenAt } = this.#owned;
    return steps.forget(tx, scope, key, firstSeenAt);
  }

  /** `step` for a request whose own transaction is `tx` (the effect's). */
  beside(tx: Tx): Step<Tx> {
    this.#requestTx = { tx };
    return this.step;
  }

  readonly step: Step<Tx> = async <T>(
    name: string,
    fn: (step: StepContext<Tx>) => T | Promise<T>,
  ): Promise<T> => {
    const steps = this.#admit(name, fn);
    const position = this.#position++;
    this.#names.add(name);
    this.#running = name;
    try {
      const found = recordedAt(await this.#recordedSteps(steps), position, name);
      if (found !== undefined) return parseResult<T>(found.result);
      return await this.#runAndRecord(steps, position, name, fn);
    } finally {
      this.#running = undefined;
    }
  };

  /** The checks before a step runs: a clear error for each misuse. */
  #admit(name: unknown, fn: unknown): StepStore<Tx> {
    if (typeof name !== 'string' || name === '' || name.length > MAX_STEP_NAME_LENGTH)
      throw new InvalidOptionError(
        'name',
        name,
        `a non-empty step name of at most ${MAX_STEP_NAME_LENGTH} characters`,
      );
    if (typeof fn !== 'function')
      throw new InvalidOptionError('fn', fn, 'a function (step) => result');
    const steps = this.#o.steps;
    if (steps === undefined)
      throw new OncelyError(
        'no_step_store',
        `step "${name}": this ledger keeps no steps; create it with a step store (createLedger({ store, steps }), docs/steps.md)`,
      );
    // The request's transaction has begun (a statement through `tx`) on a store with one writer:
    // the step's record would wait for it, and it waits for the step. Refused, not hung.
    const request = this.#requestTx;
    if (request !== undefined && this.#o.store.capabilities.holdsWriter?.(request.tx) === true)
      throw new OncelyError(
        'step_after_writes',
        `step "${name}" after the request's own statements (its tx): on ${this.#o.store.name} they hold the only writer until the receipt, so the step would wait forever; call every step first, then write (or write inside the step)`,
      );
    if (this.#running !== undefined)
      throw new OncelyError(
        'steps_overlap',
        `step "${name}" began while step "${this.#running}" runs: await each step before the next`,
      );
    // The key is derived lazily, but a name it cannot be derived from (a lone surrogate, which
    // JSON's canonical form has no text for) is refused before the step runs, as it always was.
    if (SURROGATE.test(name)) stepKeyOnNode(this.#owned.scope, this.#owned.key, name);
    if (this.#names.has(name))
      throw new OncelyError(
        'step_repeated',
        `step "${name}" is called twice in one request: give each step its own name`,
      );
    return steps;
  }

  async #recordedSteps(steps: StepStore<Tx>): Promise<Map<number, StepRecord>> {
    if (this.#recorded !== undefined) return this.#recorded;
    const { scope, key, firstSeenAt, expiresAt } = this.#owned;
    const rows = this.#tookOver ? await steps.resume(scope, key, firstSeenAt, expiresAt) : [];
    this.#recorded = new Map(rows.map((row) => [row.position, row]));
    return this.#recorded;
  }

  /**
   * Runs `fn` in its own transaction with its recovery point; the value as recorded. A step that
   * never touched its transaction (`tx`, `sql`: a call to another service and nothing else)
   * began none, and its record is written on its own, with those of concurrent steps.
   */
  async #runAndRecord<T>(
    steps: StepStore<Tx>,
    position: number,
    name: string,
    fn: (step: StepContext<Tx>) => T | Promise<T>,
  ): Promise<T> {
    const { store, clock } = this.#o;
    const { scope, key, firstSeenAt, expiresAt } = this.#owned;
    await steps.ready(); // the table, set up once before the first step's transaction
    const ran = await store
      .transaction(async (tx) => {
        const context = new LazyStepContext(name, this.#owned, tx, store);
        const value = await fn(context);
        const row: StepRecord = {
          scope,
          key,
          runAt: firstSeenAt,
          position,
          name,
          result: resultJson(name, value),
          recordedAt: clock.now(),
          expiresAt,
        };
        if (!context.touched) return { row, value, recorded: undefined };
        // Refused: this step's writes must not commit (another worker recorded its place).
        if (!(await steps.record(tx, row))) throw new RecordedFirst();
        return { row, value, recorded: true };
      })
      .catch((error: unknown) => {
        if (error instanceof RecordedFirst) return undefined;
        throw error;
      });
    const recorded = ran && (ran.recorded ?? (await steps.recordAlone(ran.row)));
    if (ran !== undefined && recorded) {
      this.#committed = true;
      this.#recorded?.set(position, ran.row);
      return asRecorded<T>(ran.value, ran.row.result);
    }
    // Another worker (the lease ran out under this one) recorded this place first; its writes
    // committed, this one's rolled back. Go on with what it recorded, if it is this step.
    this.#recorded = undefined;
    const again = await steps.resume(scope, key, firstSeenAt, expiresAt);
    this.#recorded = new Map(again.map((row) => [row.position, row]));
    this.#committed = true;
    const found = recordedAt(this.#recorded, position, name);
    if (found === undefined)
      throw new OncelyError('step_lost', `step "${name}" could not be recorded; retry the request`);
    return parseResult<T>(found.result);
  }
}

/**
 * What a step's function is given: `tx` and `sql` are read on demand, so the runner knows
 * whether the step used its transaction at all; `key` is derived when first read (a hash).
 */
class LazyStepContext<Tx> implements StepContext<Tx> {
  touched = false;
  readonly #owned: InFlightEntry;
  readonly #tx: Tx;
  readonly #store: ResolvedLedgerOptions<Tx>['store'];
  #key: string | undefined;

  constructor(
    readonly name: string,
    owned: InFlightEntry,
    tx: Tx,
    store: ResolvedLedgerOptions<Tx>['store'],
  ) {
    this.#owned = owned;
    this.#tx = tx;
    this.#store = store;
  }

  get key(): string {
    return (this.#key ??= stepKeyOnNode(this.#owned.scope, this.#owned.key, this.name));
  }

  get tx(): Tx {
    this.touched = true;
    return this.#tx;
  }

  get sql(): SqlHandle {
    this.touched = true;
    return this.#store.sql(this.#tx);
  }
}

/** The step recorded at `position`, if it is `name`; a mismatch with the record is an error. */
function recordedAt(
  recorded: ReadonlyMap<number, StepRecord>,
  position: number,
  name: string,
): StepRecord | undefined {
  const at = recorded.get(position);
  if (at !== undefined && at.name !== name) throw new StepMismatchError(position, at.name, name);
  if (at !== undefined) return at;
  for (const row of recorded.values())
    if (row.name === name) throw new StepMismatchError(position, undefined, name, row.position);
  return undefined;
}

function resultJson(name: string, value: unknown): string | null {
  if (value === undefined) return null;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (cause) {
    throw new OncelyError('step_result', `step "${name}" returned a value JSON cannot hold`, {
      cause,
    });
  }
  if (json === undefined)
    throw new OncelyError('step_result', `step "${name}" returned a ${typeof value}, not data`);
  return json;
}

function parseResult<T>(json: string | null): T {
  return (json === null ? undefined : JSON.parse(json)) as T;
}

/**
 * What the first run of a step gives back: the value as a retry will get it from its JSON. A
 * value JSON gives back unchanged (undefined, null, a string, a boolean, a finite number but -0)
 * is returned as it is, without parsing its JSON again: most steps return an id or a status.
 */
function asRecorded<T>(value: unknown, json: string | null): T {
  const kind = typeof value;
  const same =
    value === undefined ||
    value === null ||
    kind === 'string' ||
    kind === 'boolean' ||
    (kind === 'number' && Number.isFinite(value) && !Object.is(value, -0));
  return same ? (value as T) : parseResult<T>(json);
}
