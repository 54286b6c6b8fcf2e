import { h } from '../dom.js';
import type { AttemptJson, AttemptResponseJson, IntentDetail } from './outbox-client.js';

/** "2026-12-04 19:01:26.588" from an ISO string: the page says its times are UTC. */
export function utc(iso: string | null): string {
  return iso === null ? '–' : iso.replace('T', ' ').replace('Z', '');
}

function fact(term: string, value: string): Node[] {
  return [h('dt', {}, term), h('dd', {}, value)];
}

/** The intent's facts: what it sends (secret headers named only), its policy, its outcome. */
export function renderFacts(intent: IntentDetail): Node[] {
  const facts = [
    ...fact('State', intent.state),
    ...fact('Send', `${intent.method} ${intent.target}`),
    ...(intent.endpoint === null ? [] : fact('Endpoint', intent.endpoint)),
    ...fact('Attempts', `${intent.attempts} of ${intent.maxAttempts}`),
    ...fact('Created', `${utc(intent.createdAt)} by ${intent.createdBy}`),
    ...fact('Deadline', utc(intent.deadlineAt)),
    ...fact('Headers', JSON.stringify(intent.headers)),
    ...fact('Payload', `${intent.payloadBytes} bytes: ${intent.payload}`),
  ];
  if (intent.secretHeaders.length > 0)
    facts.push(...fact('Re-supplied at send time', intent.secretHeaders.join(', ')));
  if (intent.state === 'pending')
    facts.push(
      ...fact(
        'Next attempt',
        intent.parked ? 'parked until its endpoint resumes' : utc(intent.nextAttemptAt),
      ),
    );
  if (intent.finishedAt !== null)
    facts.push(
      ...fact(
        'Outcome',
        `${intent.stopReason ?? ''}${intent.status === null ? '' : `, status ${intent.status}`} at ${utc(intent.finishedAt)}${intent.detail ? `: ${intent.detail}` : ''}`,
      ),
    );
  if (intent.receipt !== null) facts.push(...fact('Receipt', intent.receipt));
  if (intent.sawUnknown)
    facts.push(...fact('Lost answer', 'an attempt got no answer: the work may have happened'));
  return facts;
}

/** The attempt timeline: one item per attempt with its start, duration, answer and the wait after. */
export function renderTimeline(attempts: readonly AttemptJson[]): Node[] {
  if (attempts.length === 0) return [h('li', {}, 'No attempt yet.')];
  const longest = Math.max(1, ...attempts.map((a) => a.durationMs ?? 0));
  return attempts.map((a) => {
    const answer =
      a.endedAt === null
        ? 'no end recorded (its worker stopped mid-attempt)'
        : `${a.outcome ?? '?'}${a.status === null ? '' : `, status ${a.status}`}`;
    const bar = h('span', { class: 'attempt-bar', 'aria-hidden': 'true' });
    bar.style.width = `${Math.round(((a.durationMs ?? 0) / longest) * 100)}%`;
    return h(
      'li',
      { class: `outcome-${a.outcome ?? 'open'}` },
      h('strong', {}, `#${a.attempt}`),
      ` ${utc(a.startedAt)} · ${a.durationMs === null ? 'open' : `${a.durationMs} ms`} · ${answer}`,
      a.detail ? ` · ${a.detail}` : '',
      ` · ${a.worker}`,
      bar,
      a.delayMs === null
        ? null
        : h('span', { class: 'attempt-wait' }, `then waited ${a.delayMs} ms`),
      a.response === null ? null : renderResponse(a.response),
    );
  });
}

/** What the receiver answered, folded: its headers and the first 4 KiB of its body. */
function renderResponse(response: AttemptResponseJson): HTMLElement {
  const size = `${response.bodyBytes} bytes${response.truncated ? ', cut at 4 KiB' : ''}`;
  const headers = Object.entries(response.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  return h(
    'details',
    { class: 'attempt-response' },
    h('summary', {}, `Response (${size})`),
    h('pre', {}, headers || '(no headers)'),
    h('pre', {}, response.body ?? `not UTF-8 text; base64: ${response.bodyBase64}`),
  );
}
