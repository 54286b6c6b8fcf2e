import { createClient, newKey, isHttpRetryError } from 'oncely';

// Any URL works; this one is the hook receiver of `npx oncely serve` (URL and TOKEN as it prints them).
const url = `${process.env.URL ?? 'http://127.0.0.1:8787'}/hooks/run-complete`;
const client = createClient(); // system clock, Math.random, fetch
const key = newKey(); // keep it with the intent; reuse it on every retry
try {
  const { response, report } = await client.request(url, {
    method: 'POST',
    body: JSON.stringify({ runId: 'run-9' }),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.TOKEN}` },
    idempotencyKey: key,
    maxAttempts: 5,
    deadlineAt: Date.now() + 30_000, // no attempt starts at or after this instant
  });
  console.log(response.status, `${report.attemptCount} attempt(s)`, report.stopReason);
} catch (error) {
  if (!isHttpRetryError(error)) throw error;
  // outcome 'unknown' = the work may have happened: retry later under the same key, never a new one
  console.error(
    error.report.stopReason,
    error.report.outcome,
    error.response?.status,
    error.problem?.detail,
  );
  process.exitCode = 1;
}
