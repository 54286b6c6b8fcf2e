/** The outbox view's API as the page calls it: the token in every request, problems as errors. */

export interface IntentSummary {
  readonly key: string;
  readonly method: string;
  readonly target: string;
  /** The endpoint it goes to, or null for a bare URL. */
  readonly endpoint: string | null;
  readonly state: string;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly sawUnknown: boolean;
  readonly createdAt: string;
  readonly nextAttemptAt: string | null;
  /** Pending on a paused or disabled endpoint: no next instant until it resumes. */
  readonly parked: boolean;
  readonly finishedAt: string | null;
  readonly stopReason: string | null;
  readonly status: number | null;
  readonly detail: string | null;
}

export interface AttemptJson {
  readonly attempt: number;
  readonly worker: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly durationMs: number | null;
  readonly outcome: string | null;
  readonly status: number | null;
  readonly detail: string | null;
  readonly delayMs: number | null;
  /** The response's headers and first 4 KiB, as the journal kept them; null without one. */
  readonly response: AttemptResponseJson | null;
}

export interface AttemptResponseJson {
  readonly headers: Readonly<Record<string, string>>;
  /** The kept bytes as text, or null when they are not UTF-8. */
  readonly body: string | null;
  readonly bodyBase64: string;
  readonly bodyBytes: number;
  readonly truncated: boolean;
}

export interface EndpointJson {
  readonly id: string;
  readonly url: string;
  readonly state: 'active' | 'paused' | 'disabled';
  readonly stateReason: string | null;
}

export interface IntentDetail extends IntentSummary {
  readonly createdBy: string;
  readonly deadlineAt: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly secretHeaders: readonly string[];
  readonly payload: string;
  readonly payloadBytes: number;
  readonly receipt: string | null;
  readonly attemptList: readonly AttemptJson[];
}

export interface Listing {
  readonly intents: readonly IntentSummary[];
  readonly next: string | null;
  readonly counts: Readonly<Record<string, number>>;
}

export interface ReplayAnswer {
  readonly dryRun: boolean;
  readonly selected: readonly IntentSummary[];
  readonly reopened: readonly string[];
  readonly skipped: readonly string[];
}

/** An answer that was not 2xx: the problem's detail, or its status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'oncely-outbox-token';

/** The token from the page's #token= fragment (then removed from the address bar) or this tab's storage. */
export function readToken(): string | null {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem(TOKEN_KEY, fromHash);
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export async function call<T>(token: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await response.json().catch(() => null)) as { detail?: string } | null;
  if (!response.ok)
    throw new ApiError(response.status, answer?.detail ?? `the server answered ${response.status}`);
  return answer as T;
}
