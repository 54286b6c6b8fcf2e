/**
 * How a receipt's headers are stored: one `name:value` line per header, not JSON. Lower-case
 * token names (RFC 9110 §5.1) and values without CR or LF (§5.5) are all a real answer carries;
 * for them a line costs the name, the value and two bytes (`content-type:application/json` is
 * 29 bytes, its JSON 34). Anything else (an app's odd header) falls back to JSON, which always
 * starts with `[`, a character no token starts with, so the two forms never mix up.
 */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const LINE_BREAK = /[\r\n]/;

export function encodeReceiptHeaders(headers: ReadonlyArray<readonly [string, string]>): string {
  const plain = headers.every(([name, value]) => TOKEN.test(name) && !LINE_BREAK.test(value));
  return plain
    ? headers.map(([name, value]) => `${name}:${value}`).join('\n')
    : JSON.stringify(headers);
}

export function decodeReceiptHeaders(stored: string): Array<[string, string]> {
  if (stored === '') return [];
  if (stored.startsWith('[')) return JSON.parse(stored) as Array<[string, string]>;
  return stored.split('\n').map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1)];
  });
}
