import { isOncelyError } from '../contract/errors.js';
import { PROBLEM_JSON } from '../contract/headers.js';
import { RetryError } from './retry-report.js';

/**
 * An RFC 9457 problem document as a server sent it (`application/problem+json`). Every member is
 * optional on the wire; `code` is oncely's own extension, meant for programs.
 */
export interface ResponseProblem {
  readonly type?: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
  readonly instance?: string;
  readonly code?: string;
  readonly [member: string]: unknown;
}

/**
 * What `client.request()` rejects with when it gives up: a {@link RetryError} (so `isRetryError`
 * and `report` work as for any retry) that also carries the last attempt's answer, typed.
 * `response` is undefined when the last attempt got none (not sent, or sent without a reply): an
 * earlier attempt's answer is never passed off as the last. Its body is still unread.
 */
export class HttpRetryError extends RetryError {
  readonly response: Response | undefined;
  /** The response's problem+json body, parsed, when it has one. */
  readonly problem: ResponseProblem | undefined;

  constructor(
    error: RetryError,
    response: Response | undefined,
    problem: ResponseProblem | undefined,
  ) {
    super(error.report, error.lastValue, error.cause);
    this.name = 'HttpRetryError';
    this.response = response;
    this.problem = problem;
  }
}

export function isHttpRetryError(value: unknown): value is HttpRetryError {
  return (
    isOncelyError(value) &&
    value.name === 'HttpRetryError' &&
    'response' in value &&
    'report' in value
  );
}

/** The client's give-up, with the last attempt's response and its problem document. */
export async function toHttpRetryError(error: RetryError): Promise<HttpRetryError> {
  const last = error.report.attempts[error.report.attempts.length - 1];
  const response =
    last?.status !== undefined && error.lastValue instanceof Response ? error.lastValue : undefined;
  return new HttpRetryError(error, response, response ? await readProblem(response) : undefined);
}

async function readProblem(response: Response): Promise<ResponseProblem | undefined> {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== PROBLEM_JSON) return undefined;
  try {
    const body: unknown = JSON.parse(await response.clone().text());
    return typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as ResponseProblem)
      : undefined;
  } catch {
    return undefined; // a problem+json label on a body that is not one: the response is still there
  }
}
