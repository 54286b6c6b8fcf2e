import { defineProblem } from 'oncely/http';

/**
 * The dropbox's own answers. `assignment_closed` is a business answer, stored as a receipt: 403,
 * not 409 (retried when it carries Retry-After) or 422 (a reused key); a closed assignment is
 * final. The status lookup tells seen-and-forgotten (410) from never seen (404).
 */
export const DROPBOX_PROBLEMS = {
  invalid_submission: defineProblem('invalid_submission', 422, 'Request body has invalid fields'),
  invalid_fault: defineProblem('invalid_fault', 400, 'Unknown fault'),
  assignment_closed: defineProblem('assignment_closed', 403, 'Assignment closed'),
  never_seen: defineProblem('never_seen', 404, 'No request with this key was seen'),
  receipt_expired: defineProblem('receipt_expired', 410, 'Receipt expired'),
} as const;
