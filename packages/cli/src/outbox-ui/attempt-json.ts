import type { AttemptEntry, AttemptResponse } from 'oncely';

/**
 * An attempt's kept body as text when it is UTF-8, else null (`bodyBase64` has the bytes either
 * way). A body cut at the bound may end inside a character: that tail is not an error.
 */
export function responseText(response: AttemptResponse): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(response.body, {
      stream: response.truncated,
    });
  } catch {
    return null;
  }
}

/** What an attempt's response looks like in JSON: headers, the kept body as text and base64. */
export function responseJson(response: AttemptResponse | null) {
  if (response === null) return null;
  return {
    headers: response.headers,
    body: responseText(response),
    bodyBase64: Buffer.from(response.body).toString('base64'),
    bodyBytes: response.body.byteLength,
    truncated: response.truncated,
  };
}

/** An attempt as the CLI's `--json` prints it: the journal's entry, its response made JSON. */
export function attemptEntryJson(attempt: AttemptEntry) {
  return { ...attempt, response: responseJson(attempt.response) };
}
