import { defineProblem } from 'oncely/http';

/**
 * The notes' own answers. `version_conflict` is a business answer, stored as a receipt, and never
 * carries Retry-After: a 409 with Retry-After means "in flight, come back", and waiting does not
 * resolve a conflict (docs/origins.md, "The notes' retry contract").
 */
export const NOTES_PROBLEMS = {
  version_conflict: defineProblem(
    'version_conflict',
    409,
    'The record changed since the expected version',
  ),
  invalid_command: defineProblem('invalid_command', 422, 'Request body has invalid fields'),
} as const;
