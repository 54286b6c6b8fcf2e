import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from './support/repo-path.js';

/**
 * Every value the root export offers, by name. Adding one is a decision: add it to src/index.ts
 * and here. (Types are checked by the compiler; this pins what exists at run time.)
 */
const ROOT_EXPORTS = [
  // the wire contract
  'OncelyError',
  'InvalidOptionError',
  'InvalidKeyError',
  'isOncelyError',
  'isInvalidOptionError',
  'isInvalidKeyError',
  'HEADER',
  'PROBLEM_JSON',
  'MAX_KEY_LENGTH',
  'validateKey',
  'keyFor',
  'newKey',
  'fingerprint',
  'STATUS_CLASSES',
  'DEFAULT_STATUS_TABLE',
  'OUTCOMES',
  'statusTable',
  'classifyStatus',
  'parseRetryAfter',
  'parseHttpDate',
  'formatHttpDate',
  'DEFAULT_RECEIPT_HEADERS',
  'WEBHOOK_HEADER',
  'DEFAULT_WEBHOOK_TOLERANCE_MS',
  'signWebhook',
  'verifyWebhook',
  'NOT_SENT_REASONS',
  'NO_RESPONSE_REASONS',
  'describeTransportFailure',
  // time and randomness
  'systemClock',
  'VirtualClock',
  'systemRandom',
  'seededRandom',
  // the retry policy
  'decide',
  'INITIAL_RETRY_STATE',
  'STOP_REASONS',
  'DELAY_REASONS',
  'backoffDelayMs',
  'JITTERS',
  'RetryTokenBucket',
  'DEFAULT_RETRY_TOKEN_BUCKET',
  'resolveRetryPolicy',
  'DEFAULT_RETRY_POLICY',
  // the client
  'retry',
  'createRetry',
  'RetryError',
  'isRetryError',
  'summarizeReport',
  'wasNeverSent',
  'HttpRetryError',
  'isHttpRetryError',
  'isTransportError',
  'classifyTransportError',
  'describeError',
  'TRANSPORT_ERROR_CODES',
  'createClient',
  'IDEMPOTENT_METHODS',
  'DEFAULT_CLIENT_OPTIONS',
  'attemptSpanEvents',
  'ATTEMPT_SPAN_EVENT',
  // the ledger
  'createLedger',
  'isBusinessAnswer',
  'DEFAULT_LEDGER_OPTIONS',
  'EXECUTE_KINDS',
  'LOOKUP_KINDS',
  'SQL_DIALECTS',
  'jsonReceipt',
  'receiptJson',
  'observeLedger',
  'ledgerSpanEvents',
  'LEDGER_SPAN_EVENT',
  // the sender's journal
  'createJournal',
  'IntentConflictError',
  'IntentStateError',
  'createOutboxWorker',
  'DEFAULT_OUTBOX_WORKER_OPTIONS',
  'INTENT_STATES',
];

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
  'sha256Hex',
  'canonicalJson',
  'keyProblem',
  'prepareIntent',
  'settleAttempt',
  'stopBeforeAttempt',
  'finalState',
  'INTERRUPTED',
  'emptyCounts',
  'isFinished',
  // removed: dead code, and a duplicate of defaultClassifyError
  'formatAttempts',
  'PROBLEM_KINDS',
  'classifyFetchError',
];

// Imports go through the package's own "exports" map, as a user's would.
test('the root export is exactly the curated list, and the withheld names are absent', async () => {
  const root = (await import('oncely')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(root).sort(), [...ROOT_EXPORTS].sort());
  for (const name of ROOT_EXPORTS) assert.notEqual(root[name], undefined, `${name} is defined`);
  for (const name of WITHHELD) assert.equal(name in root, false, `${name} is withheld`);
});

test('the root names its exports (no export *), says what it withholds, and the package has no side effects', () => {
  const index = readFileSync(repoPath('src', 'index.ts'), 'utf8');
  assert.doesNotMatch(index, /^export \* from/m);
  for (const name of WITHHELD.slice(0, -3))
    assert.match(index, new RegExp(`\`${name}\``), `the comment names ${name}`);
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as {
    sideEffects?: unknown;
  };
  assert.equal(pkg.sideEffects, false);
});

test('each store, the HTTP layer and the simulator have a subpath of their own', async () => {
  const subpaths = {
    'oncely/http': 'createIdempotencyMiddleware',
    'oncely/stores/memory': 'createMemoryStore',
    'oncely/stores/sqlite': 'createSqliteStore',
    'oncely/stores/postgres': 'createPostgresStore',
    'oncely/sim': 'runWorld',
    'oncely/express': 'idempotency',
    'oncely/fastify': 'fastifyIdempotency',
    'oncely/hono': 'idempotency',
    'oncely/node': 'idempotentListener',
  };
  const more = {
    'oncely/stores/sqlite': ['sqliteSql', 'openSqliteDatabase'],
    'oncely/stores/postgres': ['postgresSql', 'openPostgresPool'],
  };
  for (const [path, names] of Object.entries(more)) {
    const mod = (await import(path)) as Record<string, unknown>;
    for (const name of names) assert.equal(typeof mod[name], 'function', `${path} exports ${name}`);
  }
  for (const [path, name] of Object.entries(subpaths)) {
    const mod = (await import(path)) as Record<string, unknown>;
    assert.equal(typeof mod[name], 'function', `${path} exports ${name}`);
  }
});
