import { parse as parseJsonTree, type AnyNode } from '@humanwhocodes/momoa';

/**
 * Deepest nesting of arrays and objects a JSON body may have. The services take flat objects;
 * the limit keeps every later walk (the duplicate check, the canonical fingerprint) far from the
 * stack's end, whatever a 16 KiB body of `[` asks for.
 * @default 64
 */
export const MAX_JSON_DEPTH = 64;

/** A parsed body, or why it is refused: `member` and `pointer` name a repeated member. */
export type StrictJson =
  | { readonly kind: 'json'; readonly value: unknown }
  | {
      readonly kind: 'invalid';
      readonly reason: string;
      readonly member?: string;
      readonly pointer?: string;
    };

/** A UTF-16 code unit of a surrogate pair standing alone: `u` mode sees a whole pair as one code point. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * JSON.parse, and the three things it lets through that make one body mean two things:
 * - bytes that are not UTF-8 (RFC 8259 section 8.1);
 * - a string or member name with a lone surrogate (`"\ud800"`): RFC 8259 section 8.2 leaves its
 *   meaning unpredictable, and canonical JSON (RFC 8785 section 3.2.2.2) cannot represent it, so
 *   the fingerprint has nothing to stand on;
 * - a repeated member name (`{"student":"a","student":"b"}`): RFC 8259 section 4 says names
 *   SHOULD be unique and receivers disagree on which one counts, so two different bodies would
 *   share the last-wins value and its fingerprint (RFC 7493 section 2.3 makes it MUST NOT).
 * Plus nesting deeper than `maxDepth`. The walks are iterative, and the tree parse (which recurses)
 * runs only once the depth is known to be small.
 */
export function parseStrictJson(bytes: Uint8Array, maxDepth: number = MAX_JSON_DEPTH): StrictJson {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { kind: 'invalid', reason: 'the bytes are not UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'invalid', reason: error instanceof Error ? error.message : String(error) };
  }
  const shape = checkShape(value, maxDepth);
  if (shape !== undefined) return { kind: 'invalid', reason: shape };
  const repeated = firstRepeatedMember(text);
  if (repeated !== undefined) {
    return {
      kind: 'invalid',
      reason: `the member name ${JSON.stringify(repeated.member)} appears twice in ${repeated.parent || 'the top-level object'}; names must be unique`,
      member: repeated.member,
      pointer: `${repeated.parent}/${escapePointer(repeated.member)}`,
    };
  }
  return { kind: 'json', value };
}

/** Depth and lone surrogates, on the parsed value, without recursion. */
function checkShape(root: unknown, maxDepth: number): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value))
        return 'a string has a lone surrogate (an unpaired \\ud800-\\udfff escape)';
    } else if (typeof value === 'object' && value !== null) {
      if (depth >= maxDepth) return `arrays and objects are nested deeper than ${maxDepth} levels`;
      for (const [name, child] of Object.entries(value)) {
        if (LONE_SURROGATE.test(name))
          return 'a member name has a lone surrogate (an unpaired \\ud800-\\udfff escape)';
        stack.push({ value: child, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/** The first member name repeated within one object, with the JSON Pointer (RFC 6901) of that object. */
function firstRepeatedMember(text: string): { member: string; parent: string } | undefined {
  const document = parseJsonTree(text, { mode: 'json', ranges: false, tokens: false });
  const stack: Array<{ node: AnyNode; pointer: string }> = [{ node: document.body, pointer: '' }];
  while (stack.length > 0) {
    const { node, pointer } = stack.pop()!;
    if (node.type === 'Object') {
      const seen = new Set<string>();
      for (const member of node.members) {
        const name = member.name.type === 'String' ? member.name.value : member.name.name;
        if (seen.has(name)) return { member: name, parent: pointer };
        seen.add(name);
        stack.push({ node: member.value, pointer: `${pointer}/${escapePointer(name)}` });
      }
    } else if (node.type === 'Array') {
      node.elements.forEach((element, index) =>
        stack.push({ node: element.value, pointer: `${pointer}/${index}` }),
      );
    }
  }
  return undefined;
}

/** RFC 6901 section 3: `~` is `~0`, `/` is `~1`. */
function escapePointer(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}
