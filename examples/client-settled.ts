import { createClient, newKey } from 'oncely';

// throwOn: 'never': request() resolves however the intent ends, so a refusal is a value to branch
// on, not an exception to catch. Only bad options (an InvalidOptionError) still reject.
const url = `${process.env.URL ?? 'http://127.0.0.1:8787'}/hooks/run-complete`;
const client = createClient({ throwOn: 'never' });
const result = await client.request(url, {
  method: 'POST',
  body: JSON.stringify({ runId: 'run-9' }),
  headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.TOKEN}` },
  idempotencyKey: newKey(),
});
if (result.ok) {
  console.log('delivered', result.response.status); // narrowed by ok: the 2xx is there
} else if (result.response === undefined) {
  // not sent, or sent without an answer: report.outcome says which ('fail' or 'unknown')
  console.log('no answer', result.report.outcome, result.report.stopReason);
} else {
  const { response, problem, report } = result;
  console.log('refused', response.status, problem?.code, report.stopReason);
}
