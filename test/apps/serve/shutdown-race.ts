// Shared by the shutdown race tests: many submissions, each on its own connection opened before
// the stop; half are written, the stop comes with the first answer, and the other half right after. Every connection's answer is read to
// the end; a reset or a cut answer is reported, never hidden.
import { connect, type Socket } from 'node:net';
import { parseResponse } from './hostile/hostile-harness.js';

export type RaceAnswer =
  | { readonly status: number; readonly headers: Record<string, string | string[] | undefined> }
  | { readonly error: string };

/** Races `count` submissions by `token` against `stop()`, called at the first answer, between the two halves. */
export async function raceSubmissions(
  port: number,
  token: string,
  count: number,
  stop: () => void,
): Promise<RaceAnswer[]> {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  let firstAnswer = (): void => {};
  const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
  const answers = sockets.map(
    (socket) =>
      new Promise<RaceAnswer>((resolve) => {
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          firstAnswer();
        });
        socket.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ error: error.code ?? error.message }),
        );
        socket.on('close', () => {
          try {
            resolve(parseResponse(Buffer.concat(chunks)));
          } catch (error) {
            resolve({ error: error instanceof Error ? error.message : String(error) });
          }
        });
      }),
  );
  const write = (i: number): void => {
    const body = JSON.stringify({ student: `s${i}`, assignment: 'lab3' });
    sockets[i]!.write(
      `POST /dropbox/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nIdempotency-Key: race-${i}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
  for (let i = 0; i < count / 2; i++) write(i);
  await answered;
  stop();
  for (let i = Math.ceil(count / 2); i < count; i++) write(i);
  return Promise.all(answers);
}

/** The statuses, after checking that every request was answered 201 or 503 (+ Retry-After, Connection: close). */
export function checkRaceAnswers(
  answers: readonly RaceAnswer[],
  assert: typeof import('node:assert/strict'),
): { created: number; refused: number } {
  assert.deepEqual(
    answers.filter((answer) => 'error' in answer),
    [],
    'every request is answered',
  );
  let created = 0;
  let refused = 0;
  for (const answer of answers) {
    if (!('status' in answer)) continue;
    if (answer.status === 201) created++;
    else {
      assert.equal(answer.status, 503, `a ${answer.status} in the race`);
      assert.equal(answer.headers['retry-after'], '1');
      assert.equal(answer.headers['connection'], 'close');
      refused++;
    }
  }
  return { created, refused };
}
