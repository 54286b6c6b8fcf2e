import type { NotesExchange, NotesLookup, NotesStory } from './notes-story.js';

const WIDTH = 96;
const INDENT = '   ';

/** The story as `demo.py retries` would print it: each step's request, answer and meaning. */
export function formatNotesStory(story: NotesStory): string {
  const lines: string[] = [
    'oncely lab notes: the notes story (docs/origins.md), a lost reply and the retries that follow',
    '(the notes app on the ledger, in process, on an in-memory SQLite database; disposable synthetic notes)',
    '',
  ];
  for (const step of story.steps) {
    lines.push(`${step.n}. ${step.title}`);
    for (const exchange of step.exchanges) lines.push(...formatExchange(exchange));
    if (step.lookup) lines.push(...formatLookup(step.lookup));
    lines.push(...wrap(step.means, `${INDENT}= `, `${INDENT}  `), '');
  }
  const { receiptVersion, currentVersion, currentTitle } = story.summary;
  lines.push(
    'Two statements to keep apart:',
    `  "the service recorded my edit"            the receipt says version ${receiptVersion}`,
    `  "the note currently contains this title"  version ${currentVersion}, ${JSON.stringify(currentTitle)}`,
  );
  return `${lines.join('\n')}\n`;
}

function formatExchange(e: NotesExchange): string[] {
  const { method, path, caller, requestId, body } = e.request;
  const who = [
    caller === null ? '' : `as ${caller}`,
    requestId === null ? '' : `Idempotency-Key: ${requestId}`,
  ]
    .filter(Boolean)
    .join(', ');
  const lines = [`${INDENT}> ${method} ${path}${who ? `  (${who})` : ''}`];
  if (body !== null) lines.push(`${INDENT}  ${JSON.stringify(body)}`);
  const r = e.response;
  const marks = [
    r.replayed ? 'Idempotent-Replayed: true' : '',
    r.retryAfter === null ? '' : `Retry-After: ${r.retryAfter}`,
    e.lost ? 'sent by the server, never received' : '',
  ]
    .filter(Boolean)
    .join('; ');
  lines.push(`${INDENT}< ${r.status} ${formatBody(r.body)}${marks ? `   [${marks}]` : ''}`);
  if (isProblem(r.body))
    lines.push(...wrap(r.body.detail, `${INDENT}  detail: `, `${INDENT}          `));
  if (e.lost)
    lines.push(`${INDENT}! the client saw: ${e.lost.clientSaw} -> outcome ${e.lost.outcome}`);
  if (method === 'PATCH' && !e.lost && r.status >= 400 && e.attempts === 1) {
    lines.push(
      `${INDENT}  (oncely's client stopped after 1 attempt: a ${r.status}${r.retryAfter === null ? ' without Retry-After' : ''} is final)`,
    );
  }
  return lines;
}

function formatLookup(l: NotesLookup): string[] {
  const lines = [`${INDENT}? lookup(${l.caller}, ${l.requestId}) -> ${l.kind}`];
  if (l.receipt)
    lines.push(`${INDENT}  stored receipt: ${l.receipt.status} ${formatBody(l.receipt.body)}`);
  return lines;
}

interface Problem {
  readonly type: string;
  readonly code: string;
  readonly detail: string;
  readonly [member: string]: unknown;
}

function isProblem(body: unknown): body is Problem {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Problem).type === 'string' &&
    typeof (body as Problem).code === 'string'
  );
}

/** A problem as its code and extension members (the detail goes on its own line); anything else as JSON. */
function formatBody(body: unknown): string {
  if (!isProblem(body)) return JSON.stringify(body);
  const {
    type: _type,
    title: _title,
    status: _status,
    detail: _detail,
    code,
    ...extensions
  } = body;
  return `problem ${code}${Object.keys(extensions).length > 0 ? ` ${JSON.stringify(extensions)}` : ''}`;
}

function wrap(text: string, first: string, rest: string): string[] {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(' ')) {
    const prefixOnly = line === first || line === rest;
    if (!prefixOnly && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = rest + word;
    } else {
      line += prefixOnly ? word : ` ${word}`;
    }
  }
  lines.push(line);
  return lines;
}
