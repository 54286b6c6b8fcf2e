// Slow and never-ending requests: headers that never finish, a body that stops, a chunked body
// that never ends. With the request and header timeouts set small here (they are options, with
// `--request-timeout` and `--headers-timeout` as flags), each is answered 408 problem+json within
// the timeout instead of being held for Node's 300 s, and the request's work is rolled back.
// The cases run side by side: each waits for the server's timer, not for a sleep of its own. The
// timeouts are small but not tiny: on a busy machine a well-formed request must not hit them.
import { connect } from 'node:net';
import type { RawResponse } from '../server-harness.js';
import { TOKENS } from '../server-harness.js';
import { describeHostile, parseResponse, type HostileCase } from './hostile-harness.js';

/** Writes `bytes` and keeps the connection open, sending nothing more; resolves with the server's answer. */
function stall(bytes: string): (port: number) => Promise<RawResponse> {
  return (port) =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        try {
          resolve(parseResponse(Buffer.concat(chunks)));
        } catch (error) {
          reject(error);
        }
      });
    });
}

const head = (line: string, headers: readonly string[]): string =>
  `${line}\r\nHost: 127.0.0.1\r\n${headers.join('\r\n')}\r\n\r\n`;
const AUTH = `Authorization: Bearer ${TOKENS.dev}`;
const JSON_TYPE = 'Content-Type: application/json';

const cases: HostileCase[] = [
  {
    name: 'headers that never finish',
    send: stall('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1'),
    status: 408,
  },
  { name: 'a request line that never finishes', send: stall('GET /heal'), status: 408 },
  { name: 'a connection that sends nothing after a first byte', send: stall('P'), status: 408 },
  {
    name: 'a dropbox body that stops after 5 of 100 bytes',
    send: stall(
      head('POST /dropbox/submissions HTTP/1.1', [
        AUTH,
        JSON_TYPE,
        'Idempotency-Key: slow-1',
        'Content-Length: 100',
      ]) + '{"stu',
    ),
    status: 408,
  },
  {
    name: 'a never-ending chunked dropbox body',
    send: stall(
      head('POST /dropbox/submissions HTTP/1.1', [
        AUTH,
        JSON_TYPE,
        'Idempotency-Key: slow-2',
        'Transfer-Encoding: chunked',
      ]) + '5\r\n{"stu\r\n',
    ),
    status: 408,
  },
  {
    name: 'a notes edit whose body never comes',
    send: stall(
      head('PATCH /notes/note-1 HTTP/1.1', [
        AUTH,
        JSON_TYPE,
        'Idempotency-Key: slow-3',
        'Content-Length: 40',
      ]),
    ),
    status: 408,
  },
  {
    name: 'a never-ending chunked hook body',
    send: stall(
      head('POST /hooks/run-complete HTTP/1.1', [
        AUTH,
        JSON_TYPE,
        'Idempotency-Key: slow-4',
        'Transfer-Encoding: chunked',
      ]) + '2\r\n{"\r\n',
    ),
    status: 408,
  },
  {
    name: 'a complete dropbox body but for its last byte',
    send: stall(
      head('POST /dropbox/submissions HTTP/1.1', [
        AUTH,
        JSON_TYPE,
        'Idempotency-Key: slow-5',
        'Content-Length: 40',
      ]) + '{"student":"achen","assignment":"lab3"}',
    ),
    status: 408,
  },
];

describeHostile('slow requests', cases, {
  server: { requestTimeoutMs: 1500, headersTimeoutMs: 1000 },
  concurrency: true,
});
