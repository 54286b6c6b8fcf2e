import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createOutboxApiApp } from '#cli/outbox-api/outbox-api-app.js';
import { OPENAPI_DOCUMENT } from '#cli/outbox-api/openapi-document.js';
import { createCallers } from '#cli/serve/callers.js';
import { createJournal } from '#oncely/journal/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryJournalStore, createMemoryStore } from '#oncely/stores/memory/index.js';
import { tempDir } from '../../support/temp-dir.js';
import { openApi, type ApiFixture } from './outbox-api-fixture.js';

const dir = tempDir('oncely-openapi-');
let api: ApiFixture;
before(async () => {
  api = await openApi('sqlite', dir);
});
after(() => api.close());

type Operation = { responses: Record<string, unknown>; requestBody?: unknown };
const METHODS = ['get', 'post', 'patch', 'delete'] as const;

test('the OpenAPI document served at /openapi.json is valid OpenAPI 3.1', async () => {
  const served = await (await api.ask('/openapi.json', { token: null })).json();
  assert.deepEqual(served, JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
  const validator = new Validator();
  const result = await validator.validate(served as Parameters<Validator['validate']>[0]);
  assert.deepEqual(result.errors, undefined);
  assert.equal(result.valid, true);
  assert.equal(validator.version, '3.1');
});

test('every route is in the document, and every documented operation is a route', () => {
  const app = createOutboxApiApp({
    journal: createJournal({ store: createMemoryJournalStore() }),
    ledger: createLedger({ store: createMemoryStore() }) as never,
    callers: createCallers({ tokensEnv: 'a=0123456789abcdef' }),
  });
  const routed = new Set(
    app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => `${r.method} ${r.path.replace(/\/$/, '').replace(/:(\w+)/g, '{$1}')}`)
      .filter((r) => r.includes(' /v1/')),
  );
  const documented = new Set(
    Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`),
    ),
  );
  assert.deepEqual([...routed].sort(), [...documented].sort());
});

test('each documented operation answers one of its documented statuses, over HTTP', async () => {
  await api.write('POST', '/v1/endpoints', { id: 'shop', url: 'http://127.0.0.1:9/shop' });
  await api.write('POST', '/v1/messages', { endpoint: 'shop', key: 'm1', payload: {} });
  // The deletes last: they would turn the other operations into 404s.
  const operations = Object.entries(OPENAPI_DOCUMENT.paths)
    .flatMap(([template, item]) =>
      METHODS.map((method) => ({
        template,
        method,
        operation: (item as Partial<Record<string, Operation>>)[method],
      })),
    )
    .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
  const seen: string[] = [];
  for (const { template, method, operation } of operations) {
    if (!operation) continue;
    const path = template.replace('{id}', 'shop').replace('{key}', 'm1');
    const response =
      method === 'get'
        ? await api.ask(path)
        : await api.write(method.toUpperCase(), path, operation.requestBody ? {} : undefined);
    const status = String(response.status);
    assert.ok(
      status in operation.responses,
      `${method} ${template}: ${status} is not documented (${await response.text()})`,
    );
    seen.push(`${method} ${template} ${status}`);
  }
  assert.equal(seen.length, 17, seen.join('\n'));
  assert.ok(seen.filter((line) => / 2\d\d$/.test(line)).length >= 10, seen.join('\n'));
});
