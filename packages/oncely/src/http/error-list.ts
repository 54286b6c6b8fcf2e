import { problemResponse, type ProblemKind, type ProblemType } from './problem.js';

/**
 * Most errors one answer lists: an answer is sized to the request's mistakes that matter, not to
 * its length (11.5 KB of 1,600 unknown fields once got a 172 KB 422).
 * @default 20
 */
export const MAX_LISTED_ERRORS = 20;

/** Longest field name an error quotes, in characters; a longer one is cut with `…`. @default 64 */
export const MAX_QUOTED_NAME = 64;

/** A field name as an error shows it: JSON-quoted, cut at MAX_QUOTED_NAME characters. */
export function quotedName(name: string): string {
  const chars = [...name];
  return JSON.stringify(
    chars.length > MAX_QUOTED_NAME ? `${chars.slice(0, MAX_QUOTED_NAME).join('')}…` : name,
  );
}

/** Up to `max` names, quoted, then how many more: `"a", "b" and 1,598 more`. */
export function quotedNames(names: readonly string[], max: number = 5): string {
  const shown = names.slice(0, max).map(quotedName).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

/**
 * The 422 of a body whose fields are wrong: the first MAX_LISTED_ERRORS errors in `detail` and
 * `errors`, and `errorCount`, how many there were in all.
 */
export function invalidFieldsResponse(
  kind: ProblemKind | ProblemType,
  errors: readonly string[],
): Response {
  const listed = errors.slice(0, MAX_LISTED_ERRORS);
  const more = errors.length - listed.length;
  const detail = more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
  return problemResponse(kind, detail, {
    extensions: { errors: listed, errorCount: errors.length },
  });
}
