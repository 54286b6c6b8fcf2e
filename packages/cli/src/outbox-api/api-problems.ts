import {
  EndpointStateError,
  IntentConflictError,
  IntentStateError,
  InvalidOptionError,
} from 'oncely';
import { defineProblem, problemResponse } from 'oncely/http';

/** The API's own problem kinds (RFC 9457); the ledger's (400 missing key, 422 reused key, 409 in flight) come with it. */
export const API_PROBLEMS = {
  invalidRequest: defineProblem('invalid_request', 422, 'Invalid request'),
  invalidQuery: defineProblem('invalid_query', 400, 'Invalid query'),
  endpointNotFound: defineProblem('endpoint_not_found', 404, 'No such endpoint'),
  messageNotFound: defineProblem('message_not_found', 404, 'No such message'),
  endpointState: defineProblem('endpoint_state', 409, 'The endpoint is not in a state for this'),
  messageState: defineProblem('message_state', 409, 'The message is not in a state for this'),
  messageConflict: defineProblem(
    'message_conflict',
    409,
    'The message key is recorded with another send',
  ),
  notFound: defineProblem('not_found', 404, 'Nothing here'),
} as const;

export const endpointNotFound = (id: string): Response =>
  problemResponse(API_PROBLEMS.endpointNotFound, `no endpoint ${JSON.stringify(id)}`);

export const messageNotFound = (key: string): Response =>
  problemResponse(API_PROBLEMS.messageNotFound, `no message ${JSON.stringify(key)}`);

/**
 * The journal's refusals as answers: a state that forbids the change is 409, a bad value 422.
 * The routes check that the endpoint or message exists first (404) and validate bodies before the
 * ledger, so these are what is left: races with another caller or a worker.
 */
export function journalProblem(error: unknown): Response {
  if (error instanceof InvalidOptionError)
    return problemResponse(API_PROBLEMS.invalidRequest, error.message);
  if (error instanceof EndpointStateError)
    return problemResponse(API_PROBLEMS.endpointState, error.message);
  if (error instanceof IntentStateError)
    return problemResponse(API_PROBLEMS.messageState, error.message);
  if (error instanceof IntentConflictError)
    return problemResponse(API_PROBLEMS.messageConflict, error.message);
  throw error;
}
