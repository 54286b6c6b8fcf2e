import { parseItem, parseList, serializeItem } from 'structured-headers';

/**
 * How a client writes the key on the wire:
 * - `'string'`: the draft's form, a Structured Field String (`"8e03978e-..."`, with `\"` and `\\`
 *   escapes: draft-ietf-httpapi-idempotency-key-header section 2.1, RFC 9651 section 3.3.3);
 * - `'bare'`: the key's own text, unquoted, as Stripe's clients send it, for a server that takes
 *   the field's raw text as the key.
 */
export const KEY_HEADER_FORMS = ['string', 'bare'] as const;
export type KeyHeaderForm = (typeof KEY_HEADER_FORMS)[number];

/** What an Idempotency-Key field value holds: one key, or why it is not one. */
export type KeyFieldRead =
  | { readonly ok: true; readonly key: string; readonly form: KeyHeaderForm }
  | { readonly ok: false; readonly problem: string };

/** Text read as a bare key without parsing: what no Item or list can hold differently. */
const BARE_KEY = /^[A-Za-z0-9._:\/+=-]+$/;

/** The field value that carries `key` in the given form. */
export function keyFieldValue(key: string, form: KeyHeaderForm): string {
  // serializeItem escapes `"` and `\` and refuses what an sf-string cannot carry (non-ASCII,
  // controls); a key has passed validateKey before it gets here, so it never throws on one.
  return form === 'string' ? serializeItem(key) : key;
}

/**
 * Reads an Idempotency-Key field value as RFC 9651 Structured Field Item (section 4.2.3), the
 * draft's syntax (section 2.1: an Item whose value is a String):
 *
 * 1. an sf-string without parameters (`"abc"`): the key is its content, unescaped;
 * 2. any other single Item without parameters (a token, `abc`): the key is the text as sent, so a
 *    bare `abc` and `"abc"` are the same key (many clients, Stripe's among them, send bare keys);
 * 3. text that is no Item at all (a bare UUID starting with a digit, `8e03978e-...`): the key is
 *    the text as sent, unless it holds a comma or a semicolon, or opens a quote it never closes.
 *
 * Refused, saying why: a list (two members: a comma, or the field sent twice, which HTTP joins
 * into one value with ", ", RFC 9110 section 5.3), an Item with parameters (`"k";v=1`: the draft
 * defines none, and guessing whether `;v=1` belongs to the key would let two servers disagree on
 * what the key is), and a quoted string that is not a valid sf-string. The key's own rules
 * (length, printable ASCII) are contract/idempotency-key's `keyProblem`, applied after this.
 */
export function readKeyField(value: string): KeyFieldRead {
  // HTTP strips the optional whitespace around a field value (RFC 9110 section 5.5); so does this.
  const text = value.trim();
  // The common case, a bare key (a UUID, `order-42`): no quote, comma, semicolon or space, so it
  // is a token, a number or no Item at all, and read as sent either way (rule 2 or 3). A UUID
  // starting with a digit made the parser throw on every request.
  if (BARE_KEY.test(text)) return { ok: true, key: text, form: 'bare' };
  let item: ReturnType<typeof parseItem> | undefined;
  try {
    item = parseItem(text);
  } catch {
    item = undefined;
  }
  if (item !== undefined) {
    const [bare, parameters] = item;
    if (parameters.size > 0)
      return refused(
        `the Idempotency-Key field carries parameters (${[...parameters.keys()].map((k) => `;${k}`).join('')}); it must be one key without parameters`,
      );
    return typeof bare === 'string'
      ? { ok: true, key: bare, form: 'string' }
      : { ok: true, key: text, form: 'bare' };
  }
  // A list of two or more holds a comma: without one, spare the parse (and its exception).
  const members = text.includes(',') ? listLength(text) : undefined;
  if (members !== undefined && members > 1)
    return refused(
      `the Idempotency-Key field holds a list of ${members} values; send one key, in one Idempotency-Key field`,
    );
  if (text.includes(','))
    return refused(
      'the Idempotency-Key field holds a comma: a list, or the field sent twice; send one key, in one Idempotency-Key field',
    );
  if (text.includes(';'))
    return refused(
      'the Idempotency-Key field holds a semicolon, which starts parameters; send the key alone',
    );
  if (text.startsWith('"'))
    return refused(
      'the Idempotency-Key field opens a quoted string that is not a valid Structured Field String (RFC 9651 section 3.3.3)',
    );
  return { ok: true, key: text, form: 'bare' };
}

/** How many members the text has as an sf-list, or undefined when it is no list. */
function listLength(text: string): number | undefined {
  try {
    return parseList(text).length;
  } catch {
    return undefined;
  }
}

function refused(problem: string): KeyFieldRead {
  return { ok: false, problem };
}
