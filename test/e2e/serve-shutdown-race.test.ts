// 100 submissions racing a SIGTERM, each on its own connection: every one is answered, 201 or
// 503 (+ Retry-After, Connection: close), never a reset; the rows written are exactly the 201s.
// The connections are open before the signal; half the requests are written, the signal goes
// with the first answer, and the other half right after: some run, some arrive during the drain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { DROPBOX_TABLE } from '#cli/receivers/dropbox/dropbox-table.js';
import { checkRaceAnswers, raceSubmissions } from '../apps/serve/shutdown-race.js';
import { startServeProcess } from './serve-process.js';

const REQUESTS = 100;

test(`${REQUESTS} submissions racing a SIGTERM: each a 201 or a 503, never a reset; rows equal the 201s`, async (t) => {
  const serve = await startServeProcess(['--quiet']);
  try {
    const answers = await raceSubmissions(serve.port, serve.token, REQUESTS, () =>
      serve.child.kill('SIGTERM'),
    );
    const { created, refused } = checkRaceAnswers(answers, assert);
    t.diagnostic(`${created} answered 201, ${refused} answered 503`);
    assert.equal(await serve.exited, 0, serve.stderr());

    const db = openSqliteDatabase(join(serve.dataDir, 'oncely.db'));
    try {
      const { count } = db.prepare(`SELECT count(*) AS count FROM ${DROPBOX_TABLE}`).get() as {
        count: number;
      };
      assert.equal(count, created, `rows ${count}, 201s ${created}`);
    } finally {
      db.close();
    }
  } finally {
    await serve.cleanUp();
  }
});
