import * as crypto from 'node:crypto';
import { stepKey } from '../contract/step-key.js';

/** Any UTF-16 surrogate: such a name takes contract/step-key.ts's own way (it checks them). */
const SURROGATE = /[\ud800-\udfff]/;

/** SHA-256 as hex through OpenSSL; `crypto.hash` (Node 20.12+) needs no Hash object per call. */
const sha256Hex: (input: string) => string =
  typeof crypto.hash === 'function'
    ? (input) => crypto.hash('sha256', input, 'hex')
    : (input) => crypto.createHash('sha256').update(input).digest('hex');

/**
 * `stepKey` (contract/step-key.ts), digit for digit, hashed by node:crypto: the contract's hash is
 * pure JavaScript so it runs in a browser, and it cost a step more than its SQLite record (some
 * 6 µs of a 50 µs step, bench/steps); OpenSSL takes a tenth of that. The canonical text is the one
 * step-key.ts writes; test/ledger/step-key-node.test.ts holds the two functions equal.
 */
export function stepKeyOnNode(scope: string, key: string, name: string): string {
  if (SURROGATE.test(scope) || SURROGATE.test(key) || SURROGATE.test(name))
    return stepKey(scope, key, name);
  const canonical = `{"key":${JSON.stringify(key)},"scope":${JSON.stringify(scope)},"step":${JSON.stringify(name)}}`;
  return `step_${sha256Hex(canonical).slice(0, 40)}`;
}
