/**
 * Request headers as either side of a webhook holds them: a Fetch `Headers` (or anything with
 * its `get`), or node's `IncomingHttpHeaders` (`req.headers`: lower-case names, a string, an
 * array for a repeated field, undefined when absent). Structural, so this layer stays free of
 * `node:*` and runs in a browser.
 */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * One field's value, or null when absent. A repeated field is joined with ", ", as
 * `Headers.get` joins it (Fetch standard, "get"; RFC 9110 section 5.3). Names match case-
 * insensitively: node gives them lower case, a hand-made object may not.
 */
export function headerValue(headers: HeaderSource, name: string): string | null {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(name: string): string | null }).get(name);
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const lower = name.toLowerCase();
  let value = record[lower];
  if (value === undefined)
    for (const [key, v] of Object.entries(record))
      if (key.toLowerCase() === lower) {
        value = v;
        break;
      }
  if (value === undefined) return null;
  return typeof value === 'string' ? value : value.join(', ');
}
