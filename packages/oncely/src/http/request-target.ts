import { problemResponse } from './problem.js';

/** What the node adapters know of a request line and its Host header fields. */
export interface RequestHead {
  readonly method: string;
  /** The request target exactly as sent (`req.url`). */
  readonly target: string;
  /** Every `Host` field line, in order (from rawHeaders: node keeps only the first). */
  readonly hosts: readonly string[];
  /** `1.1`, `1.0`. */
  readonly httpVersion: string;
  readonly encrypted: boolean;
}

/**
 * A request's URL, parsed only when something reads it: the guard needs only its path and query
 * (the fingerprint's), and parsing a URL cost a replay a few µs. A class, so its getter lives on
 * the prototype (guard-inputs.ts).
 */
export class RequestTarget {
  readonly kind = 'url';
  #url: URL | undefined;

  constructor(
    readonly href: string,
    /** The URL's `pathname` + `search`, as WHATWG URL parsing makes them. */
    readonly pathAndQuery: string,
    url?: URL,
  ) {
    this.#url = url;
  }

  get url(): URL {
    return (this.#url ??= new URL(this.href));
  }
}

/** The URL a handler sees, or the 4xx problem that answers the request instead. */
export type TargetRead = RequestTarget | { readonly kind: 'refused'; readonly response: Response };

/**
 * Methods a fetch `Request` cannot carry (the Fetch standard's forbidden methods): TRACE would
 * echo the request back, credentials included (RFC 9110 section 9.3.8), and CONNECT asks for a
 * tunnel, which no route here offers.
 */
export const FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'] as const;

/**
 * The methods the node adapters pass on to a handler: what a 405 for a forbidden method names in
 * Allow, since which of them a path answers is for the handler's own 405 to say.
 */
export const ADAPTER_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * A Host value: an IP literal, an IPv4 address or a registered name, and an optional port
 * (RFC 9110 section 7.2, RFC 3986 section 3.2.2). Nothing else: a `/`, `?` or `#` in it would
 * move the path, the query or the fragment of the URL built from it.
 */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::[0-9]{1,5})?$/;

/**
 * The URL of a request from its head, the way RFC 9112 section 3.3 reconstructs the target URI:
 * the path and query come from the request target only, never from Host. Refused with a 4xx
 * problem (before any handler runs, so nothing changes):
 * - a Host field that is missing in HTTP/1.1, repeated, or not a host[:port] (RFC 9112 section
 *   3.2: "MUST respond with a 400");
 * - an absolute-form target that is not an http(s) URL (section 3.2.2), an asterisk-form or
 *   authority-form target outside OPTIONS and CONNECT (sections 3.2.3 and 3.2.4);
 * - a method a fetch Request cannot carry (405).
 */
export function readRequestTarget(head: RequestHead): TargetRead {
  const method = head.method.toUpperCase();
  if ((FORBIDDEN_METHODS as readonly string[]).includes(method)) {
    const response = problemResponse(
      'method_not_allowed',
      `${method} is not served here: no route echoes a request or opens a tunnel`,
    );
    response.headers.set('allow', ADAPTER_METHODS);
    return { kind: 'refused', response };
  }
  if (head.hosts.length > 1)
    return refuse(
      `the request has ${head.hosts.length} Host fields; send one (RFC 9112 section 3.2)`,
    );
  const host = head.hosts[0]?.trim();
  if (host === undefined || host === '') {
    if (head.httpVersion !== '1.0')
      return refuse('the request has no Host field; HTTP/1.1 requires one (RFC 9112 section 3.2)');
  } else if (!HOST_VALUE.test(host)) {
    return badHost(host);
  }
  const scheme = head.encrypted ? 'https' : 'http';
  const origin = `${scheme}://${host || 'localhost'}`;
  const { target } = head;
  // origin-form: all path and query (RFC 9112 section 3.2.1). Appended to the origin rather than
  // resolved against it: `//x/y` resolved would be host x, path /y (RFC 3986 section 4.2).
  // A path appended to an origin that parses always parses too, to the same path and query
  // whatever the origin (test/http/request-target.test.ts holds both), so only the Host can fail
  // (a port past 65535, a bad IP literal); each check and parse is made once per distinct value.
  if (target.startsWith('/')) {
    if (!originParses(origin)) return badHost(host!);
    return new RequestTarget(`${origin}${target}`, pathAndQueryOf(target));
  }
  if (host && !URL.canParse(origin)) return badHost(host);
  // absolute-form (a request through a proxy): the target is the whole URL, Host is ignored.
  // The authority must be there as sent: WHATWG URL parsing reads `http:///healthz` as host
  // `healthz`, path `/`, where RFC 3986 sees an empty host, which http forbids.
  const absolute = /^https?:\/\/[^/?#\\]/i.test(target) ? parseUrl(target) : undefined;
  if (
    absolute !== undefined &&
    absolute.hostname !== '' &&
    absolute.username === '' &&
    absolute.password === ''
  )
    return new RequestTarget(absolute.href, `${absolute.pathname}${absolute.search}`, absolute);
  return refuse(
    `the request target ${JSON.stringify(target.slice(0, 100))} is neither a path nor an http(s) URL`,
  );
}

/** A 400 for a request line or Host the server cannot read a URL from. */
function refuse(detail: string): TargetRead {
  return { kind: 'refused', response: problemResponse('malformed_request', detail) };
}

function badHost(host: string): TargetRead {
  return refuse(
    `the Host field ${JSON.stringify(host.slice(0, 100))} is not a host[:port] (RFC 9110 section 7.2)`,
  );
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Values seen, up to a bound each: a client sending ever new paths must not grow them forever. */
const MAX_REMEMBERED = 1000;
const origins = new Map<string, boolean>();
const paths = new Map<string, string>();

function remember<V>(seen: Map<string, V>, key: string, value: V): V {
  if (seen.size >= MAX_REMEMBERED) seen.clear();
  seen.set(key, value);
  return value;
}

/** True when `scheme://host[:port]` parses as a URL (a port past 65535, a bad IP literal do not). */
function originParses(origin: string): boolean {
  return origins.get(origin) ?? remember(origins, origin, URL.canParse(origin));
}

/** An origin-form target's path and query, as WHATWG URL parsing leaves them. */
function pathAndQueryOf(target: string): string {
  let path = paths.get(target);
  if (path !== undefined) return path;
  const url = new URL(`http://localhost${target}`);
  path = `${url.pathname}${url.search}`;
  return remember(paths, target, path);
}
