import {
  quotedName,
  jsonBodyFingerprint,
  jsonValidator,
  type FingerprintInput,
  type Validate,
} from 'oncely/http';
import type { DropboxLimits } from './dropbox-options.js';
import { DROPBOX_PROBLEMS } from './dropbox-problems.js';

/** What a student hands in: the dropbox story's (docs/origins.md) `submit(key, student, assignment)` without the key. */
export interface Submission {
  readonly student: string;
  readonly assignment: string;
}

export const SUBMISSION_FIELDS = ['student', 'assignment'] as const;

/** A checked submission, or every reason it is not one (all of them, so one round trip fixes them). */
export type SubmissionCheck =
  | { readonly ok: true; readonly submission: Submission }
  | { readonly ok: false; readonly errors: readonly string[] };

/** C0 and C1 controls, DEL and line/paragraph separators: nothing a name or a dump line should carry. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/**
 * Checks a parsed body: an object with exactly `student` and `assignment`, each a string of 1 to
 * `maxFieldLength` characters without control characters or surrounding whitespace (" achen"
 * would be a second student in the dump).
 */
export function checkSubmission(
  value: unknown,
  limits: Pick<DropboxLimits, 'maxFieldLength'>,
): SubmissionCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      errors: [
        `the body must be a JSON object {"student": …, "assignment": …}, not ${describe(value)}`,
      ],
    };
  }
  const record = value as Record<string, unknown>;
  const errors: string[] = [];
  for (const name of Object.keys(record)) {
    if (!(SUBMISSION_FIELDS as readonly string[]).includes(name))
      errors.push(`unknown field ${quotedName(name)} (allowed: ${SUBMISSION_FIELDS.join(', ')})`);
  }
  for (const name of SUBMISSION_FIELDS) {
    const field = record[name];
    if (field === undefined) errors.push(`${name} is missing`);
    else if (typeof field !== 'string')
      errors.push(`${name} must be a string, not ${describe(field)}`);
    else if (field.trim() === '') errors.push(`${name} must not be blank`);
    else if ([...field].length > limits.maxFieldLength)
      errors.push(`${name} is longer than ${limits.maxFieldLength} characters`);
    else if (CONTROL.test(field)) errors.push(`${name} contains a control character`);
    else if (field !== field.trim()) errors.push(`${name} has leading or trailing whitespace`);
  }
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    submission: {
      student: record['student'] as string,
      assignment: record['assignment'] as string,
    },
  };
}

/**
 * The dropbox's `validate` step for the idempotency middleware: the body must be UTF-8 JSON
 * (415, 400) holding a well-formed submission (422 invalid_submission, every error listed). A
 * malformed submission changes nothing: no row and no receipt that would pin the key to a typo.
 */
export function submissionValidator(
  limits: Pick<DropboxLimits, 'maxFieldLength'>,
): Validate<Submission> {
  return jsonValidator({
    what: 'submission',
    invalid: DROPBOX_PROBLEMS.invalid_submission,
    check: (value) => {
      const checked = checkSubmission(value, limits);
      return checked.ok ? { ok: true, value: checked.submission } : checked;
    },
  });
}

/** The dropbox takes JSON in UTF-8 only: the http layer's rule (RFC 8259 section 8.1, RFC 6839). */
export { isJsonMediaType } from 'oncely/http';

/**
 * The dropbox's fingerprint: method, path and the submission as canonical JSON (RFC 8785), so a
 * retry whose JSON differs only in key order or spacing is the same submission and replays.
 */
export function submissionFingerprint(input: FingerprintInput): string {
  return jsonBodyFingerprint(input, 'submission');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
