import {
  jsonBodyFingerprint,
  jsonValidator,
  type FingerprintInput,
  type Validate,
} from 'oncely/http';
import { checkNoteCommand, type NoteCommand } from './note-command.js';
import { NOTES_PROBLEMS } from './notes-problems.js';

/**
 * The notes' `validate` step for the idempotency middleware: a malformed command (415, 400, 422)
 * is refused before the ledger, so it changes nothing: no edit, and no receipt that would pin the
 * request ID to a typo.
 */
export const noteCommandValidator: Validate<NoteCommand> = jsonValidator({
  what: 'command',
  invalid: NOTES_PROBLEMS.invalid_command,
  check: (value) => {
    const checked = checkNoteCommand(value);
    return checked.ok ? { ok: true, value: checked.command } : checked;
  },
});

/** The notes take JSON in UTF-8 only, by the http layer's one rule (RFC 8259 section 8.1). */
export { isJsonMediaType } from 'oncely/http';

/**
 * The notes' fingerprint: method, path and the command as canonical JSON (RFC 8785). The notes story (docs/origins.md)
 * "serializes this fixed set of fields consistently, so changing the order of dictionary keys
 * doesn't change its meaning": `{"title":…,"expectedVersion":1}` replays
 * `{"expectedVersion":1,"title":…}`, while any changed value is a different command (422).
 * A body that is not JSON never gets this far; should one, its bytes are fingerprinted.
 */
export function noteFingerprint(input: FingerprintInput): string {
  return jsonBodyFingerprint(input, 'command');
}
