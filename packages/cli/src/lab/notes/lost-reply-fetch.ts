/** What the server answered to a request whose reply the client never got. */
export interface LostReply {
  readonly status: number;
  readonly headers: Headers;
  readonly bodyText: string;
}

export interface LostReplyFetch {
  /** A fetch over `inner` that loses the next reply once {@link dropNextReply} was called. */
  readonly fetch: typeof globalThis.fetch;
  /** Arms the loss for the next request only. */
  dropNextReply(): void;
  /** Every reply lost so far, in order: what the server really said. */
  readonly lost: LostReply[];
}

/**
 * Loses a reply for real (docs/origins.md, "The notes' retry contract": "updates note-1, then raises a timeout after the update
 * commits"): the request reaches the server, the server runs it to the end and commits, and
 * only then does the client get a TimeoutError instead of the response. Nothing is simulated on
 * the server side; the uncertainty is entirely the client's.
 */
export function lostReplyFetch(
  inner: (request: Request) => Response | Promise<Response>,
): LostReplyFetch {
  let armed = false;
  const lost: LostReply[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await inner(new Request(input, init));
    if (!armed) return response;
    armed = false;
    // The whole answer left the server (it committed before answering); it dies on the way back.
    lost.push({
      status: response.status,
      headers: response.headers,
      bodyText: await response.text(),
    });
    throw new DOMException(
      'the reply never arrived: the connection dropped after the server committed',
      'TimeoutError',
    );
  };
  return {
    fetch: fetch as typeof globalThis.fetch,
    dropNextReply: () => void (armed = true),
    lost,
  };
}
