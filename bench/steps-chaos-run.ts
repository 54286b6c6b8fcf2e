import pg from 'pg';
import { createClient, isRetryError, seededRandom, type Random } from 'oncely';
import {
  createPostgresJournalStore,
  createPostgresStore,
  createSqlStepStore,
} from 'oncely/stores/postgres';
import { freePort } from './chaos-cluster.js';
import {
  startPaymentMock,
  type PaymentFaultRates,
  type PaymentTally,
} from './steps-chaos-payment.js';
import {
  KILL_KINDS,
  ORDERS_TABLE,
  STEP_NAMES,
  STEPS_TABLE,
  type KillPoint,
  type KillSpec,
} from './steps-chaos-protocol.js';
import { ChaosServers } from './steps-chaos-servers.js';
import { verifyChaos, type ChaosVerdict } from './steps-chaos-verify.js';

export interface StepsChaosOptions {
  readonly pgUrl: string;
  readonly requests: number;
  /** Kills of each kind (before-commit, after-commit, before-receipt). */
  readonly each: number;
  readonly seed: number;
  readonly concurrency: number;
  readonly payment: PaymentFaultRates;
  /** Servers that charge outside a step (bench/steps-chaos --broken): the check must fail. */
  readonly broken?: boolean;
  readonly onProgress?: (line: string) => void;
}

export interface StepsChaosResult {
  readonly options: Omit<StepsChaosOptions, 'onProgress' | 'pgUrl'>;
  readonly elapsedMs: number;
  readonly lives: number;
  readonly kills: readonly KillPoint[];
  readonly crashes: readonly string[];
  readonly plannedLeft: number;
  readonly attempts: number;
  readonly answers: ReadonlyMap<string, number>;
  readonly payment: PaymentTally;
  readonly verdict: ChaosVerdict;
  readonly stderrTail: readonly string[];
}

/** The server gives up on the payment service after this; the mock's timeouts hold longer. */
const PAYMENT_TIMEOUT_MS = 300;
const LEASE_MS = 1000;

/**
 * 10,000 checkouts (by default) of three steps on two servers sharing one PostgreSQL schema of
 * the run's own, the servers SIGKILLed at every step boundary and restarted, the payment mock
 * failing at random; oncely's client retries each checkout under its key, with jitter, each
 * attempt on either server. Then every checkout is sent once more, and the databases and the
 * payment mock's books are checked.
 */
export async function runStepsChaos(options: StepsChaosOptions): Promise<StepsChaosResult> {
  const random = seededRandom(options.seed);
  const schema = `steps_chaos_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Pool({ connectionString: options.pgUrl, max: 2 });
  const payment = await startPaymentMock(options.payment, seededRandom(options.seed, 1), 1000);
  const started = performance.now();
  let servers: ChaosServers | undefined;
  try {
    await setUp(admin, schema);
    const ports = [await freePort(), await freePort()];
    const base = {
      pgUrl: options.pgUrl,
      schema,
      paymentUrl: payment.url,
      leaseMs: LEASE_MS,
      broken: options.broken === true,
    };
    servers = new ChaosServers(
      ports.map((port, i) => ({
        ...base,
        name: `server-${'ab'[i]}`,
        port,
        paymentTimeoutMs: PAYMENT_TIMEOUT_MS,
      })),
      killPlan(options, random),
    );
    await servers.start();
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    const load = await sendAll(options, urls, seededRandom(options.seed, 2));
    options.onProgress?.(`sent ${options.requests}; the replays`);
    const replays = await sendAll(options, urls, seededRandom(options.seed, 3));
    const verdict = await verifyChaos(
      admin,
      schema,
      options.requests,
      payment.tally,
      load,
      replays,
    );
    return {
      options: {
        ...options,
        onProgress: undefined,
        pgUrl: undefined,
      } as StepsChaosResult['options'],
      elapsedMs: performance.now() - started,
      lives: servers.lives,
      kills: servers.kills,
      crashes: servers.crashes,
      plannedLeft: servers.plannedLeft,
      attempts: load.attempts,
      answers: load.answers,
      payment: payment.tally,
      verdict,
      stderrTail: servers.stderrTail,
    };
  } finally {
    await servers?.stop();
    await payment.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

/** The schema, the ledger's, the steps' and the journal's tables, and the orders table. */
async function setUp(admin: pg.Pool, schema: string): Promise<void> {
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.query(
    `CREATE TABLE "${schema}".${ORDERS_TABLE} (request text NOT NULL, charge text NOT NULL, server text NOT NULL)`,
  );
  // Set up once here: two servers creating the same tables at once would collide.
  const store = createPostgresStore({ pool: admin, schema });
  const journalStore = createPostgresJournalStore({ pool: admin, schema });
  await store.ready();
  await createSqlStepStore(store, { table: `${schema}.${STEPS_TABLE}` }).ready();
  await journalStore.ready();
}

/** Each kind `each` times, the steps' kinds spread over the three steps, in a seeded order. */
function killPlan(options: StepsChaosOptions, random: Random): KillSpec[] {
  const points: KillPoint[] = [];
  for (const kind of KILL_KINDS)
    for (let i = 0; i < options.each; i++)
      points.push({ kind, step: kind === 'before-receipt' ? null : STEP_NAMES[i % 3]! });
  for (let i = points.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [points[i], points[j]] = [points[j]!, points[i]!];
  }
  // Each server's lives use its half of the plan within about half of its checkouts.
  const spread = Math.max(1, Math.floor(options.requests / points.length));
  return points.map((point) => ({ ...point, after: 1 + Math.floor(random.next() * spread) }));
}

/** What the client got for each checkout: its final body (undefined when it gave up). */
export interface LoadOutcome {
  readonly bodies: (string | undefined)[];
  readonly failures: string[];
  attempts: number;
  /** Attempts by what they got: a status, or why no answer came. */
  readonly answers: Map<string, number>;
}

async function sendAll(
  options: StepsChaosOptions,
  urls: string[],
  random: Random,
): Promise<LoadOutcome> {
  // Each attempt goes to either server: a retry may land on the other one.
  const anyServer: typeof fetch = (input, init) =>
    fetch(
      String(input).replace('http://servers', urls[Math.floor(random.next() * urls.length)]!),
      init,
    );
  const client = createClient({
    fetch: anyServer,
    random,
    baseDelayMs: 20,
    maxDelayMs: 1000,
    maxAttempts: 100,
    attemptTimeoutMs: 10_000,
    onAttempt: (record) => {
      const answer = String(record.status ?? record.transport?.reason ?? record.outcome);
      outcome.answers.set(answer, (outcome.answers.get(answer) ?? 0) + 1);
    },
  });
  const outcome: LoadOutcome = { bodies: [], failures: [], attempts: 0, answers: new Map() };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.requests) {
      const i = next++;
      const id = `r${i}`;
      try {
        const { response, report } = await client.request('http://servers/checkout', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id }),
          idempotencyKey: `checkout-${id}`,
        });
        outcome.attempts += report.attemptCount;
        outcome.bodies[i] = await response?.text();
      } catch (error) {
        if (!isRetryError(error)) throw error;
        outcome.attempts += error.report.attemptCount;
        outcome.failures.push(`${id}: ${error.message}`);
      }
      if ((i + 1) % 1000 === 0) options.onProgress?.(`${i + 1} checkouts answered`);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return outcome;
}
