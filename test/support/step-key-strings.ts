/**
 * Every kind of string a step key is made from (empty, quotes and backslashes, control
 * characters, non-ASCII, the JSON-only line separators, a long one), and the triples the step-key
 * tests compare two implementations on: scopes from all of them, keys from the first five, step
 * names from the fourth on.
 */
const STEP_KEY_STRINGS: readonly string[] = [
  '',
  'alice',
  'order-7',
  'a "quoted" \\ back\\slash',
  'tab\tnew\nline\u0000nul\u001f',
  'é ü 中文 😀',
  '\u2028\u2029 separators',
  'x'.repeat(300),
];

export function* stepKeyTriples(): Generator<readonly [scope: string, key: string, name: string]> {
  for (const scope of STEP_KEY_STRINGS)
    for (const key of STEP_KEY_STRINGS.slice(0, 5))
      for (const name of STEP_KEY_STRINGS.slice(3)) yield [scope, key, name];
}
