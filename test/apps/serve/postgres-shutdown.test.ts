// The shutdown race on PostgreSQL: 100 submissions racing the server's close, each answered 201
// or 503 (never a reset), and the rows a fresh server then finds are exactly the 201s.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createCallers } from '#cli/serve/callers.js';
import { startServer } from '#cli/serve/start-server.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../../stores/postgres-env.js';
import { send, TOKENS } from './server-harness.js';
import { checkRaceAnswers, raceSubmissions } from './shutdown-race.js';

await describePostgres('the shutdown race', ({ url, options }) =>
  describe('oncely serve on PostgreSQL, shut down under load', options, () => {
    it('100 submissions racing the close: each a 201 or a 503; rows equal the 201s', async (t) => {
      const schema = uniqueSchemaName('oncely_shutdown');
      const callers = createCallers({ devToken: TOKENS.dev });
      try {
        const server = await startServer({ port: 0, db: url, pgSchema: schema, callers });
        let closing: Promise<unknown> = Promise.resolve();
        const answers = await raceSubmissions(
          server.port,
          TOKENS.dev,
          100,
          () => void (closing = server.close()),
        );
        await closing;
        const { created, refused } = checkRaceAnswers(answers, assert);
        t.diagnostic(`${created} answered 201, ${refused} answered 503`);

        const again = await startServer({ port: 0, db: url, pgSchema: schema, callers });
        try {
          const rows = await send(again.port, {
            path: '/dropbox/store?limit=1000',
            headers: { authorization: `Bearer ${TOKENS.dev}` },
          });
          assert.equal(rows.json<{ total: number }>().total, created);
        } finally {
          await again.close();
        }
      } finally {
        await dropSchema(url, schema);
      }
    });
  }),
);
