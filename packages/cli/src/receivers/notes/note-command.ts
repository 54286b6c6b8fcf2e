import { quotedNames } from 'oncely/http';

/**
 * The edit command of the notes story (docs/origins.md): `{expectedVersion, title}` for the note named in the path. The
 * request ID travels as the Idempotency-Key. "Changing any of those makes it a different
 * command", so the fields are a closed set and anything else is refused, not ignored.
 */
export interface NoteCommand {
  /** The version the author reviewed before asking for the edit. */
  readonly expectedVersion: number;
  readonly title: string;
}

/** The limits of a command, checked before the ledger is touched. */
export const NOTE_LIMITS = {
  /** @default 200 (characters, counted as code points) */
  maxTitleChars: 200,
  /** A command is two short fields; a body past this is refused with 413. @default 16384 */
  maxBodyBytes: 16_384,
} as const;

/** C0 and C1 controls, DEL and line/paragraph separators: nothing a one-line title should carry. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

export const NOTE_COMMAND_FIELDS = ['expectedVersion', 'title'] as const;

/** A command, or every reason the value is not one (a 422's detail). */
export type CommandCheck =
  | { readonly ok: true; readonly command: NoteCommand }
  | { readonly ok: false; readonly errors: readonly string[] };

/** Checks a parsed JSON body against the command's shape; collects every problem, not just the first. */
export function checkNoteCommand(value: unknown): CommandCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      errors: ['the body must be a JSON object {"expectedVersion": integer >= 1, "title": string}'],
    };
  }
  const record = value as Record<string, unknown>;
  const errors: string[] = [];
  const extra = Object.keys(record).filter(
    (field) => !(NOTE_COMMAND_FIELDS as readonly string[]).includes(field),
  );
  if (extra.length > 0)
    errors.push(
      `unknown field${extra.length === 1 ? '' : 's'} ${quotedNames(extra)}: only expectedVersion and title are allowed`,
    );

  const { expectedVersion, title } = record;
  if (expectedVersion === undefined)
    errors.push('expectedVersion is missing: send the version you reviewed');
  else if (
    typeof expectedVersion !== 'number' ||
    !Number.isSafeInteger(expectedVersion) ||
    expectedVersion < 1
  ) {
    errors.push(`expectedVersion must be an integer >= 1, got ${JSON.stringify(expectedVersion)}`);
  }
  if (title === undefined) errors.push('title is missing');
  else if (typeof title !== 'string')
    errors.push(`title must be a string, got ${title === null ? 'null' : typeof title}`);
  else if (title.trim() === '') errors.push('title must not be blank');
  else if ([...title].length > NOTE_LIMITS.maxTitleChars) {
    errors.push(
      `title is ${[...title].length} characters long; at most ${NOTE_LIMITS.maxTitleChars} are allowed`,
    );
  } else if (CONTROL.test(title))
    errors.push(
      'title contains a control character (a NUL would cut it short wherever it is shown)',
    );

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    command: { expectedVersion: expectedVersion as number, title: title as string },
  };
}
