/** The outbox view: the journal's intents, filters, an attempt timeline per intent, and replay. */
import { byId, h } from '../dom.js';
import {
  ApiError,
  call,
  readToken,
  saveToken,
  type IntentDetail,
  type IntentSummary,
  type Listing,
  type ReplayAnswer,
} from './outbox-client.js';
import { renderFacts, renderTimeline, utc } from './outbox-detail.js';
import { loadEndpoints } from './outbox-endpoints.js';

const STATES = ['pending', 'delivered', 'refused', 'gave_up', 'unknown', 'cancelled'] as const;
const DEAD = new Set(['refused', 'gave_up', 'unknown']);
const REPLAYABLE = new Set([...DEAD, 'cancelled']);
const PAGE = 50;

let token = readToken();
let shown: IntentDetail | undefined;

function setStatus(text: string, isError = false): void {
  const status = byId('status');
  status.textContent = text;
  status.className = isError ? 'status-line error' : 'status-line';
}

function showResult(text: string, isError = false): void {
  const result = byId('replay-result');
  result.textContent = text;
  result.className = isError ? 'notice notice-error' : 'notice';
  result.hidden = false;
}

/** The filter the form says, as the API's parameters (without paging). */
function filterParams(): URLSearchParams {
  const params = new URLSearchParams();
  const states = STATES.filter((state) => byId<HTMLInputElement>(`state-${state}`).checked);
  if (states.length > 0 && states.length < STATES.length) params.set('state', states.join(','));
  const target = byId<HTMLInputElement>('target').value.trim();
  if (target.endsWith('*')) params.set('targetPrefix', target.slice(0, -1));
  else if (target !== '') params.set('target', target);
  const endpoint = byId<HTMLSelectElement>('endpoint').value;
  if (endpoint !== '') params.set('endpoint', endpoint);
  const since = byId<HTMLInputElement>('since').value.trim();
  if (since !== '') params.set('since', since);
  return params;
}

function row(intent: IntentSummary): HTMLTableRowElement {
  const open = h('button', { type: 'button', class: 'link' }, intent.key);
  open.addEventListener('click', () => void showIntent(intent.key));
  const why = intent.stopReason
    ? `${intent.stopReason}${intent.status === null ? '' : ` ${intent.status}`}`
    : intent.parked
      ? 'parked: its endpoint is paused or disabled'
      : `next ${utc(intent.nextAttemptAt)}`;
  return h(
    'tr',
    { 'data-key': intent.key },
    h('td', { class: `state state-${intent.state}` }, intent.state),
    h('td', {}, open),
    h('td', {}, intent.endpoint ?? '–'),
    h('td', { class: 'target' }, `${intent.method} ${intent.target}`),
    h('td', {}, `${intent.attempts}/${intent.maxAttempts}`),
    h('td', {}, utc(intent.finishedAt)),
    h('td', {}, why),
  );
}

async function load(after?: string): Promise<void> {
  if (token === null) return showTokenForm('');
  const params = filterParams();
  params.set('limit', String(PAGE));
  if (after !== undefined) params.set('after', after);
  const filterError = byId('filter-error');
  try {
    const listing = await call<Listing>(token, `/api/intents?${params}`);
    filterError.hidden = true;
    const body = byId('intents');
    if (after === undefined) body.replaceChildren();
    body.append(...listing.intents.map(row));
    if (body.childElementCount === 0)
      body.append(h('tr', {}, h('td', { colspan: 7 }, 'No intent matches this filter.')));
    const more = byId<HTMLButtonElement>('more');
    more.hidden = listing.next === null;
    more.dataset['after'] = listing.next ?? '';
    const counts = Object.entries(listing.counts).filter(([, n]) => n > 0);
    byId('counts').textContent =
      `(journal: ${counts.map(([s, n]) => `${n} ${s}`).join(', ') || 'empty'})`;
    setStatus('connected');
  } catch (error) {
    handle(error, (message) => {
      filterError.textContent = message;
      filterError.hidden = false;
    });
  }
}

async function showIntent(key: string): Promise<void> {
  if (token === null) return;
  try {
    shown = await call<IntentDetail>(token, `/api/intents/${encodeURIComponent(key)}`);
  } catch (error) {
    return handle(error, (message) => showResult(message, true));
  }
  byId('detail-heading').textContent = `Intent ${shown.key}`;
  byId('facts').replaceChildren(...renderFacts(shown));
  byId('timeline').replaceChildren(...renderTimeline(shown.attemptList));
  byId('replay').hidden = !REPLAYABLE.has(shown.state);
  byId('detail').hidden = false;
  byId('detail-heading').focus();
}

/** Asks in the dialog; resolves true when the person confirms. */
function confirmReplay(text: string, unknown: boolean): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm');
  byId('confirm-text').textContent = text;
  byId('confirm-unknown').hidden = !unknown;
  dialog.showModal();
  return new Promise((resolve) => {
    const answer = (yes: boolean) => () => {
      dialog.close();
      resolve(yes);
    };
    byId('confirm-yes').onclick = answer(true);
    byId('confirm-no').onclick = answer(false);
    dialog.oncancel = answer(false);
  });
}

async function replayShown(): Promise<void> {
  if (token === null || shown === undefined) return;
  const { key, state } = shown;
  const go = await confirmReplay(
    `Replay ${key} (${state})? It becomes pending under the same key with a fresh budget; the next outbox run sends it. Its attempts so far stay listed.`,
    state === 'unknown',
  );
  if (!go) return;
  try {
    await call<ReplayAnswer>(token, '/api/replay', { key });
    showResult(`Reopened ${key}: it is pending again under the same key.`);
  } catch (error) {
    return handle(error, (message) => showResult(message, true));
  }
  await Promise.all([showIntent(key), load()]);
}

/** Replays every dead intent the filter selects: a dry run first, to say how many. */
async function replayFiltered(): Promise<void> {
  if (token === null) return;
  const params = filterParams();
  const states = (params.get('state') ?? [...DEAD].join(','))
    .split(',')
    .filter((s) => REPLAYABLE.has(s));
  if (states.length === 0)
    return showResult(
      'Pick at least one of refused, gave_up, unknown or cancelled to replay.',
      true,
    );
  const request: Record<string, unknown> = { state: states };
  for (const name of ['target', 'targetPrefix', 'endpoint', 'since']) {
    const value = params.get(name);
    if (value !== null) request[name] = value;
  }
  try {
    const dry = await call<ReplayAnswer>(token, '/api/replay', { ...request, dryRun: true });
    if (dry.selected.length === 0) return showResult('No dead intent matches this filter.');
    const unknown = dry.selected.some((i) => i.state === 'unknown');
    if (
      !(await confirmReplay(
        `Replay ${dry.selected.length} intent(s) (${states.join(', ')}) under their own keys?`,
        unknown,
      ))
    )
      return;
    const done = await call<ReplayAnswer>(token, '/api/replay', request);
    showResult(
      `Reopened ${done.reopened.length}${done.skipped.length > 0 ? `, skipped ${done.skipped.length} (replayed meanwhile)` : ''}.`,
    );
  } catch (error) {
    return handle(error, (message) => showResult(message, true));
  }
  await load();
}

function handle(error: unknown, show: (message: string) => void): void {
  if (error instanceof ApiError && error.status === 401)
    return showTokenForm('The token was refused.');
  show(error instanceof Error ? error.message : String(error));
}

function showTokenForm(message: string): void {
  byId('token-form').hidden = false;
  setStatus(message || 'not connected: give the access token', message !== '');
}

function start(): void {
  byId('state-boxes').replaceChildren(
    ...STATES.map((state) =>
      h(
        'label',
        {},
        h('input', { type: 'checkbox', id: `state-${state}`, checked: DEAD.has(state) }),
        ` ${state}`,
      ),
    ),
  );
  byId('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    void load();
  });
  byId('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    token = byId<HTMLInputElement>('token').value.trim();
    saveToken(token);
    byId('token-form').hidden = true;
    void load();
    void loadEndpoints(token, () => load()).catch((error) => handle(error, setStatus));
  });
  byId('more').addEventListener('click', () => void load(byId('more').dataset['after']));
  byId('replay').addEventListener('click', () => void replayShown());
  byId('replay-all').addEventListener('click', () => void replayFiltered());
  void load();
  if (token !== null)
    void loadEndpoints(token, () => load()).catch((error) => handle(error, setStatus));
}

start();
