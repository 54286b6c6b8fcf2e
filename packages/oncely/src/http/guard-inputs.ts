import type { Incoming } from './incoming.js';
import type { FingerprintInput } from './request-fingerprint.js';
import type { AdmittedRequest, ValidationInput } from './request-validation.js';

/*
 * What `validate` and `fingerprintOf` are given, on every guarded request. Their web Request (or
 * its headers) is made only when read, so they have getters, and the getters live on a class's
 * prototype: V8 makes an object literal with a getter in dictionary mode, anew on each call, and
 * enough of them keep the major garbage collector busy. Two such literals cost each replay about
 * 15 µs of server CPU in bench/anchors, most of it on the collector's threads (docs/performance.md).
 */

/** `validate`'s input: the caller, the bytes, and the web Request when it reads it. */
export class LazyValidationInput implements ValidationInput {
  constructor(
    private readonly incoming: Incoming,
    readonly scope: string,
    readonly body: Uint8Array,
  ) {}

  get request(): Request {
    return this.incoming.request();
  }
}

/**
 * `fingerprintOf`'s input: method, bytes, value, and the path and query the default fingerprint
 * reads; the URL and headers only when read.
 */
export class LazyFingerprintInput implements FingerprintInput {
  readonly method: string;
  readonly pathAndQuery: string;
  readonly body: Uint8Array;
  readonly value: unknown;

  constructor(
    private readonly incoming: Incoming,
    admitted: AdmittedRequest,
  ) {
    this.method = incoming.method;
    this.pathAndQuery = incoming.pathAndQuery;
    this.body = admitted.body;
    this.value = admitted.value;
  }

  get url(): URL {
    return this.incoming.url;
  }

  get headers(): Headers {
    return this.incoming.request().headers;
  }
}
