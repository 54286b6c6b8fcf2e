import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

// A handler's exception reaches the client as a bare 500; unless the app says otherwise, the
// operator sees it on stderr. Run in a child process: the test must not replace console.error.
test('without onError, a failing handler is logged to stderr with its request', () => {
  const script = `
    import { createLedger } from 'oncely';
    import { createMemoryStore } from 'oncely/stores/memory';
    import { createIdempotencyMiddleware, withIdempotency } from 'oncely/http';
    const middleware = createIdempotencyMiddleware({ ledger: createLedger({ store: createMemoryStore() }), scopeOf: () => 'alice' });
    const handler = withIdempotency(middleware, () => { throw new Error('the orders table is missing'); });
    const response = await handler(new Request('http://app.test/orders', { method: 'POST', body: '{}', headers: { 'idempotency-key': 'k1' } }));
    console.log(response.status);`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: new URL('../../../', import.meta.url),
  });
  assert.equal(run.stdout.trim(), '500');
  assert.match(
    run.stderr,
    /^oncely: POST http:\/\/app\.test\/orders failed: Error: the orders table is missing/m,
  );
});
