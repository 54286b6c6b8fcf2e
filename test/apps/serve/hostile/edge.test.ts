// Hostile requests at the server's edge, before any route: Host values that would route, request
// targets that are not URLs, methods a fetch Request cannot carry, request lines and headers
// node's parser refuses, and path traversal. Each is a 4xx problem+json that changes nothing.
import assert from 'node:assert/strict';
import { TOKENS } from '../server-harness.js';
import { auth, describeHostile, rawRequest, sendRaw, type HostileCase } from './hostile-harness.js';

const AUTH = `Authorization: Bearer ${TOKENS.dev}`;
const raw = (line: string, headers?: readonly string[], body?: string): HostileCase['send'] =>
  rawRequest(line, headers, body);
/** A request whose Host header carries the server's own port, which only the driver knows. */
const withPort =
  (
    line: string,
    host: (port: number) => string,
    extra: readonly string[] = [],
  ): HostileCase['send'] =>
  (port) =>
    sendRaw(
      port,
      `${line}\r\nHost: ${host(port)}\r\n${[...extra, 'Connection: close'].join('\r\n')}\r\n\r\n`,
    );

// The Host header never routes (RFC 9112 section 3.3): a Host that is not host[:port] is a 400.
const BAD_HOSTS: Array<[string, (port: number) => string]> = [
  ['an open bracket', () => '['],
  ['a close bracket', () => ']'],
  [
    'a path and a query (once served /healthz for /anything)',
    (port) => `127.0.0.1:${port}/healthz?`,
  ],
  ['a path (once turned /store into /dropbox/store)', (port) => `127.0.0.1:${port}/dropbox`],
  ['a fragment', (port) => `127.0.0.1:${port}#x`],
  ['a query', (port) => `127.0.0.1:${port}?a=1`],
  ['userinfo', (port) => `dev@127.0.0.1:${port}`],
  ['two ports', (port) => `127.0.0.1:${port}:${port}`],
  ['a port too long', () => '127.0.0.1:123456'],
  // Shaped like host[:port], refused by the URL parser alone:
  ['a port past 65535', () => '127.0.0.1:99999'],
  ['an IPv6 literal with too few groups', () => '[1:2:3]'],
  ['a space', () => 'local host'],
  ['a backslash', (port) => `127.0.0.1:${port}\\healthz`],
  ['percent-encoded slash', (port) => `127.0.0.1:${port}%2fhealthz`],
  ['an unclosed IPv6 literal', () => '[::1'],
  ['a comma list', () => 'a.example, b.example'],
];
const hostCases: HostileCase[] = [
  ...BAD_HOSTS.map(
    ([name, host]): HostileCase => ({
      name: `Host with ${name} on GET /anything`,
      send: withPort('GET /anything HTTP/1.1', host),
      status: 400,
    }),
  ),
  ...BAD_HOSTS.slice(0, 4).map(
    ([name, host]): HostileCase => ({
      name: `Host with ${name} on an authenticated GET /store`,
      send: withPort('GET /store HTTP/1.1', host, [AUTH]),
      status: 400,
    }),
  ),
  { name: 'no Host in HTTP/1.1', send: raw('GET /healthz HTTP/1.1', []), status: 400 },
  {
    name: 'an empty Host in HTTP/1.1',
    send: raw('GET /healthz HTTP/1.1', ['Host: ']),
    status: 400,
  },
  {
    name: 'two Host fields',
    send: raw('GET /healthz HTTP/1.1', ['Host: a.example', 'Host: b.example']),
    status: 400,
  },
  // A well-formed but foreign Host is answered from the target's path alone.
  {
    name: 'a foreign Host on a path nobody serves: 404 from the path',
    send: raw('GET /nope HTTP/1.1', ['Host: evil.example']),
    status: 404,
  },
  {
    name: 'Host naming /healthz on a path nobody serves',
    send: raw('GET /nope HTTP/1.1', ['Host: healthz']),
    status: 404,
    check: (r) => assert.match(r.text, /\/nope/),
  },
];

// Request targets: absolute-form must be an http(s) URL (RFC 9112 section 3.2.2); nothing else
// but origin-form is served.
const targetCases: HostileCase[] = [
  ['http://[/x', 400],
  ['http://[::1/healthz', 400],
  ['http:///healthz', 400],
  ['ftp://127.0.0.1/healthz', 400],
  ['file:///etc/passwd', 400],
  ['http://dev:secret@127.0.0.1/healthz', 400],
  ['javascript:alert(1)', 400],
  ['*', 400],
  ['http://127.0.0.1/nope', 404],
  ['http://evil.example/dropbox/store', 401],
].map(
  ([target, status]): HostileCase => ({
    name: `target ${target}`,
    send: raw(`GET ${target} HTTP/1.1`),
    status: status as number,
  }),
);

// Methods: TRACE would echo the request (RFC 9110 section 9.3.8); CONNECT asks for a tunnel.
const methodCases: HostileCase[] = [
  ...['/', '/healthz', '/dropbox/submissions', '/hooks/x'].map(
    (path): HostileCase => ({
      name: `TRACE ${path}`,
      send: raw(`TRACE ${path} HTTP/1.1`, ['Host: 127.0.0.1', AUTH]),
      status: 405,
    }),
  ),
  {
    name: 'TRACK / (a method node does not know: its parser refuses it)',
    send: raw('TRACK / HTTP/1.1'),
    status: 400,
  },
  {
    name: 'CONNECT to a remote port',
    send: raw('CONNECT example.com:443 HTTP/1.1', ['Host: example.com:443']),
    status: 405,
  },
  {
    name: 'CONNECT to the server itself',
    send: withPort('CONNECT 127.0.0.1:1 HTTP/1.1', () => '127.0.0.1:1'),
    status: 405,
  },
  { name: 'CONNECT with a path', send: raw('CONNECT /healthz HTTP/1.1'), status: 405 },
  { name: 'PROPFIND /', send: raw('PROPFIND / HTTP/1.1'), status: 404 },
];

// What node's parser refuses: answered problem+json, not node's bare status line.
const parserCases: HostileCase[] = [
  { name: 'not HTTP at all', send: { raw: 'NOT HTTP AT ALL\r\n\r\n' }, status: 400 },
  { name: 'HTTP/9.9', send: raw('GET / HTTP/9.9'), status: 400 },
  { name: 'a relative target', send: raw('GET healthz HTTP/1.1'), status: 400 },
  {
    name: 'a header line without a colon',
    send: raw('GET /healthz HTTP/1.1', ['Host: a', 'no colon here']),
    status: 400,
  },
  {
    name: 'a space before the colon',
    send: raw('GET /healthz HTTP/1.1', ['Host: a', 'X-A : b']),
    status: 400,
  },
  {
    name: 'a NUL in a header value',
    send: raw('GET /healthz HTTP/1.1', ['Host: a', 'X-A: a\u0000b']),
    status: 400,
  },
  {
    name: 'headers over 16 KiB',
    send: raw('GET /healthz HTTP/1.1', ['Host: a', `X-Big: ${'b'.repeat(20_000)}`]),
    status: 431,
  },
  {
    name: 'Content-Length and Transfer-Encoding both (smuggling)',
    send: raw(
      'POST /dropbox/submissions HTTP/1.1',
      ['Host: a', AUTH, 'Content-Length: 4', 'Transfer-Encoding: chunked'],
      '0\r\n\r\n',
    ),
    status: 400,
  },
  {
    name: 'two different Content-Lengths',
    send: raw(
      'POST /dropbox/submissions HTTP/1.1',
      ['Host: a', AUTH, 'Content-Length: 4', 'Content-Length: 5'],
      'abcde',
    ),
    status: 400,
  },
  {
    name: 'a negative Content-Length',
    send: raw('POST /dropbox/submissions HTTP/1.1', ['Host: a', AUTH, 'Content-Length: -1']),
    status: 400,
  },
  {
    name: 'a Content-Length that is not a number',
    send: raw('POST /dropbox/submissions HTTP/1.1', ['Host: a', AUTH, 'Content-Length: ten']),
    status: 400,
  },
  {
    name: 'a chunk size that is not hex',
    send: raw(
      'POST /hooks/x HTTP/1.1',
      ['Host: a', AUTH, 'Transfer-Encoding: chunked'],
      'zz\r\nabc\r\n0\r\n\r\n',
    ),
    status: 400,
  },
  {
    name: 'an unknown transfer coding',
    send: raw(
      'POST /hooks/x HTTP/1.1',
      ['Host: a', AUTH, 'Transfer-Encoding: gzip, chunked, identity'],
      '0\r\n\r\n',
    ),
    status: 400,
  },
];

// Path traversal, plain and encoded: the paths resolve inside the URL space, never the disk.
const traversalCases: HostileCase[] = [
  '/../../etc/passwd',
  '/%2e%2e/%2e%2e/etc/passwd',
  '/..%2f..%2fpackage.json',
  '/%2e%2e%2fpackage.json',
  '/%252e%252e/package.json',
  '/dropbox/../../package.json',
  '/web/dist/../../package.json',
  '/./.././apps/serve/pages.ts',
  '/..%5c..%5cpackage.json',
  '/%5c..%5cpackage.json',
  '//etc/passwd',
  '/index.html%00.json',
  '/assets/..%2f..%2f..%2fpackage.json',
  '/.env',
  '/.git/config',
  '/node_modules/hono/package.json',
].map(
  (path): HostileCase => ({
    name: `traversal GET ${path}`,
    send: { path, headers: auth(TOKENS.dev) },
    status: 404,
  }),
);

describeHostile('the server edge', [
  ...hostCases,
  ...targetCases,
  ...methodCases,
  ...parserCases,
  ...traversalCases,
]);
