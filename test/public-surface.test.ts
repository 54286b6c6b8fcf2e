import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { sourceFiles } from './support/layer-imports.js';
import { CLI_SRC, LIBRARY_SRC, repoPath } from './support/repo-path.js';

/**
 * Every value each subpath of the package offers, by name. Adding one is a decision: add it to
 * the subpath's index file and here. (Types are checked by the compiler; this pins what exists
 * at run time. `node scripts/count-public-names.js` counts the types too.)
 */
const EXPORTS: Record<string, readonly string[]> = {
  oncely: [
    // the wire contract
    'OncelyError',
    'InvalidOptionError',
    'InvalidKeyError',
    'isOncelyError',
    'isInvalidOptionError',
    'isInvalidKeyError',
    'HEADER',
    'PROBLEM_JSON',
    'validateKey',
    'keyFor',
    'newKey',
    'fingerprint',
    'formatHttpDate',
    'WEBHOOK_HEADER',
    'DEFAULT_WEBHOOK_TOLERANCE_MS',
    'signWebhook',
    'verifyWebhook',
    'generateWebhookSecret',
    'generateWebhookKeyPair',
    'webhookKeyKind',
    'checkSigningKey',
    'rotateSecrets',
    'activeSecrets',
    'describeTransportFailure',
    // time and randomness
    'systemClock',
    'VirtualClock',
    'seededRandom',
    // the retry policy's shared budget
    'RetryTokenBucket',
    // the client
    'retry',
    'createRetry',
    'RetryError',
    'isRetryError',
    'summarizeReport',
    'wasNeverSent',
    'HttpRetryError',
    'isHttpRetryError',
    'describeError',
    'createNodeHttpFetch',
    'createClient',
    'attemptSpanEvents',
    // the ledger
    'createLedger',
    'SQL_DIALECTS',
    'jsonReceipt',
    'observeLedger',
    'ledgerSpanEvents',
    // steps: recovery points inside a request (docs/steps.md)
    'StepMismatchError',
    'isStepMismatchError',
    'stepKey',
    // the sender's journal
    'createJournal',
    'IntentConflictError',
    'IntentStateError',
    'createOutboxWorker',
    'INTENT_STATES',
    'DEAD_STATES',
    'EndpointStateError',
    'ENDPOINT_STATES',
    'DEFAULT_OUTBOX_POLICY',
    'PARKED_AT',
  ],
  'oncely/http': [
    'createIdempotencyMiddleware',
    'withIdempotency',
    'PROBLEMS',
    'defineProblem',
    'problemDetails',
    'problemResponse',
    'retryAfterSeconds',
    'BEARER_CHALLENGE',
    'unauthenticatedResponse',
    'methodNotAllowedResponse',
    'jsonValidator',
    'jsonBodyFingerprint',
    'isJsonMediaType',
    'quotedName',
    'quotedNames',
    'toNodeListener',
    'answeredInsteadStatus',
    'abortNodeRequest',
  ],
  'oncely/policy': [
    'InvalidOptionError',
    'isInvalidOptionError',
    'SYNTHETIC_TIMEOUT_STATUS',
    'seededRandom',
    'backoffDelayMs',
    'resolveRetryPolicy',
    'DEFAULT_RETRY_POLICY',
    'RetryTokenBucket',
    'decide',
    'INITIAL_RETRY_STATE',
  ],
  'oncely/express': ['idempotency', 'idempotencyOf', 'captureRawBody'],
  'oncely/fastify': ['fastifyIdempotency'],
  'oncely/fetch': ['idempotentHandler', 'idempotencyOf'],
  'oncely/hono': ['idempotency'],
  'oncely/nestjs': ['OncelyModule', 'Idempotent', 'Idempotency'],
  'oncely/node': ['idempotentListener', 'idempotencyOf'],
  'oncely/stores/memory': [
    'createMemoryStore',
    'createMemoryJournalStore',
    'createMemoryStepStore',
  ],
  'oncely/stores/sqlite': [
    'createSqliteStore',
    'openSqliteDatabase',
    'sqliteSql',
    'createSqliteJournalStore',
    'createSqliteRetryBudget',
    'createSqlStepStore',
    'migrateSqliteLedger',
    'compactSqliteFile',
    'LedgerMigrationError',
    'StoreClosedError',
    'TransactionEndedError',
    'TransactionNotBegunError',
  ],
  'oncely/stores/postgres': [
    'createPostgresStore',
    'openPostgresPool',
    'redact',
    'postgresSql',
    'createPostgresJournalStore',
    'createPostgresRetryBudget',
    'createSqlStepStore',
    'migratePostgresLedger',
    'LedgerMigrationError',
    'StoreClosedError',
    'TransactionEndedError',
  ],
  'oncely/orm': [
    'createOrmLedgerStore',
    'transactionSql',
    'createSqlStepStore',
    'StoreClosedError',
    'TransactionEndedError',
  ],
  'oncely/orm/kysely': ['kyselyExecutor'],
  'oncely/orm/knex': ['knexExecutor'],
  'oncely/orm/drizzle': ['drizzlePgExecutor', 'drizzleSqliteExecutor'],
  'oncely/orm/prisma': ['prismaExecutor'],
};

/** Internals and duplicates kept out of the root on purpose (listed in src/index.ts's comment). */
const WITHHELD = [
  'decideClaim',
  'normalizeReceipt',
  'resolveLedgerOptions',
  'versionOf',
  'tombstoneOf',
  'ENTRY_STATES',
  'TAKE_OVER_REASONS',
  'decideStart',
  'mayStartAttempt',
  'defaultObserve',
  'observeResponse',
  'defaultClassifyError',
  'outcomeOfStatus',
  'SYNTHETIC_TIMEOUT_STATUS',
  'isBusinessAnswer',
  'receiptJson',
  'isTransportError',
  'classifyTransportError',
  'decide',
  'INITIAL_RETRY_STATE',
  'backoffDelayMs',
  'resolveRetryPolicy',
  'sha256Hex',
  'canonicalJson',
  'keyProblem',
  'parseRetryAfter',
  'parseHttpDate',
  'statusTable',
  'classifyStatus',
  'prepareIntent',
  'settleAttempt',
  'stopBeforeAttempt',
  'finalState',
  'INTERRUPTED',
  'emptyCounts',
  'isFinished',
  'STATUS_CLASSES',
  'OUTCOMES',
  'STOP_REASONS',
  'DELAY_REASONS',
  'JITTERS',
  'EXECUTE_KINDS',
  'LOOKUP_KINDS',
  'NOT_SENT_REASONS',
  'NO_RESPONSE_REASONS',
  'TRANSPORT_ERROR_CODES',
  'IDEMPOTENT_METHODS',
  'MAX_KEY_LENGTH',
  'ATTEMPT_SPAN_EVENT',
  'LEDGER_SPAN_EVENT',
  'DEFAULT_STATUS_TABLE',
  'DEFAULT_RECEIPT_HEADERS',
  'DEFAULT_RETRY_POLICY',
  'DEFAULT_RETRY_TOKEN_BUCKET',
  'DEFAULT_CLIENT_OPTIONS',
  'DEFAULT_LEDGER_OPTIONS',
  'DEFAULT_OUTBOX_WORKER_OPTIONS',
  'systemRandom',
  // removed: dead code, and a duplicate of defaultClassifyError
  'formatAttempts',
  'PROBLEM_KINDS',
  'classifyFetchError',
];

/** One adapter per framework: the subpath middlewares; the older bridges are gone. */
const REMOVED_FROM_HTTP = ['toExpressHandler', 'honoIdempotency'];

/** The package's own "exports" map (the subpaths a user can import). */
function subpaths(): string[] {
  const pkg = JSON.parse(readFileSync(repoPath('packages/oncely/package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
  };
  return Object.keys(pkg.exports)
    .filter((path) => path !== './package.json')
    .map((path) => (path === '.' ? 'oncely' : `oncely/${path.slice(2)}`));
}

// Imports go through the package's own "exports" map, as a user's would.
test('each subpath exports exactly its curated list, and the withheld names are absent', async () => {
  assert.deepEqual(subpaths().sort(), Object.keys(EXPORTS).sort(), 'a list for every subpath');
  for (const [path, names] of Object.entries(EXPORTS)) {
    const mod = (await import(path)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(mod).sort(), [...names].sort(), path);
    for (const name of names) assert.notEqual(mod[name], undefined, `${path}: ${name} is defined`);
  }
  const root = (await import('oncely')) as Record<string, unknown>;
  for (const name of WITHHELD) assert.equal(name in root, false, `${name} is withheld`);
  const http = (await import('oncely/http')) as Record<string, unknown>;
  const hono = (await import('oncely/hono')) as Record<string, unknown>;
  for (const name of REMOVED_FROM_HTTP) {
    assert.equal(name in http, false, `oncely/http: ${name} is removed`);
    assert.equal(name in hono, false, `oncely/hono: ${name} is removed`);
  }
});

test('no index names its exports with export *, the root says what it withholds, and the package has no side effects', () => {
  const pkg = JSON.parse(readFileSync(repoPath('packages/oncely/package.json'), 'utf8')) as {
    sideEffects?: unknown;
    exports: Record<string, string | { types?: string }>;
  };
  for (const target of Object.values(pkg.exports)) {
    if (typeof target !== 'object' || target.types === undefined) continue;
    const source = target.types
      .replace(/^\.\/dist\//, `${LIBRARY_SRC}/`)
      .replace(/\.d\.ts$/, '.ts');
    assert.doesNotMatch(readFileSync(repoPath(source), 'utf8'), /^export \* from/m, source);
  }
  // Nor any other file: a layer's index that re-exports everything hides what it offers.
  for (const tree of [LIBRARY_SRC, CLI_SRC])
    for (const file of sourceFiles(repoPath(tree)))
      assert.doesNotMatch(
        readFileSync(repoPath(tree, file), 'utf8'),
        /^export \* from/m,
        `${tree}/${file}`,
      );
  const index = readFileSync(repoPath(LIBRARY_SRC, 'index.ts'), 'utf8');
  for (const name of WITHHELD.slice(0, -3))
    assert.match(index, new RegExp(`\`${name}\``), `the comment names ${name}`);
  assert.equal(pkg.sideEffects, false);
});

test('the simulator is an app, not a subpath of the package', () => {
  assert.equal(subpaths().includes('oncely/sim'), false);
});

test('the public-name count docs/design.md states is the count of the built .d.ts', async () => {
  const design = readFileSync(repoPath('docs', 'design.md'), 'utf8');
  const stated =
    /offers \*\*(\d+) public names\*\* across its (\d+) subpaths \((\d+) distinct\)/.exec(design);
  assert.ok(stated, 'docs/design.md states the count once, in its words');
  const names = (await import(pathToFileURL(repoPath('scripts', 'public-names.js')).href)) as {
    publicNamesBySubpath(dir: string): Record<string, string[]>;
    countPublicNames(bySubpath: Record<string, string[]>): { total: number; distinct: number };
  };
  const bySubpath = names.publicNamesBySubpath(repoPath(LIBRARY_SRC, '..'));
  const { total, distinct } = names.countPublicNames(bySubpath);
  assert.deepEqual(
    [total, Object.keys(bySubpath).length, distinct],
    stated.slice(1).map(Number),
    'a name added or removed: update docs/design.md (node scripts/count-public-names.js)',
  );
});
