import { jsonBodyFingerprint, readJsonBody } from '../../http/json-body.js';
import { problemResponse } from '../../http/problem.js';
import type { FingerprintInput } from '../../http/request-fingerprint.js';
import { checkNoteCommand, NOTE_LIMITS, type NoteCommand } from './note-command.js';

/** A well-formed command with the bytes it came in, or the problem to answer instead. */
export type NoteRequestRead =
  | { readonly kind: 'command'; readonly command: NoteCommand; readonly bytes: Uint8Array }
  | { readonly kind: 'refused'; readonly response: Response };

/**
 * Reads and checks a PATCH body before the ledger sees it. A malformed command (413, 415, 400,
 * 422) is refused here, so it changes nothing: no edit, and no receipt that would pin the request
 * ID to a typo (Stripe's rule too: a request that fails validation is not saved).
 */
export async function readNoteRequest(request: Request): Promise<NoteRequestRead> {
  const read = await readJsonBody(request, { maxBodyBytes: NOTE_LIMITS.maxBodyBytes, what: 'command' });
  if (read.kind === 'refused') return read;
  const checked = checkNoteCommand(read.value);
  if (!checked.ok) return { kind: 'refused', response: problemResponse('invalid_command', checked.errors.join('; '), { extensions: { errors: checked.errors } }) };
  return { kind: 'command', command: checked.command, bytes: read.bytes };
}

/** The notes take JSON in UTF-8 only, by the http layer's one rule (RFC 8259 section 8.1). */
export { isJsonMediaType } from '../../http/json-body.js';

/**
 * The notes' fingerprint: method, path and the command as canonical JSON (RFC 8785). Seed 004
 * "serializes this fixed set of fields consistently, so changing the order of dictionary keys
 * doesn't change its meaning": `{"title":…,"expectedVersion":1}` replays
 * `{"expectedVersion":1,"title":…}`, while any changed value is a different command (422).
 * A body that is not JSON never gets this far; should one, its bytes are fingerprinted.
 */
export function noteFingerprint(input: FingerprintInput): string {
  return jsonBodyFingerprint(input, 'command');
}
