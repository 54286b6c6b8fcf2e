/**
 * The key from an Idempotency-Key header value. The IETF draft makes the field a Structured
 * Field String (RFC 8941: `"8e03978e-..."`, with \" and \\ escapes); many clients send the bare
 * token instead. Both are accepted: a quoted value is unquoted, anything else is taken as is and
 * then validated like any key (contract/idempotency-key).
 */
export function keyFromHeader(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(["\\])/g, '$1');
  }
  return value;
}
