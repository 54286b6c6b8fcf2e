/**
 * The store view: the caller's dropbox rows, ledger receipts and hook hits, refreshed every
 * second. The page asks for the token once (or takes it from `#token=…`, which the banner prints;
 * a fragment never reaches the server or its log) and keeps it in sessionStorage. Data is shown
 * with textContent only: rows carry whatever callers sent. The rows and receipts are the newest
 * the feeds send (100 unless the page's own URL says `?limit=N`, which it passes on), and each
 * heading says how many there are in all.
 */
export const STORE_PAGE_PATH = '/store';
export const STORE_SCRIPT_PATH = '/store.js';

/** The endpoints the page polls, all caller-scoped and token-guarded. */
export const STORE_FEEDS = {
  dropbox: '/dropbox/store',
  receipts: '/ledger/receipts',
  hooks: '/hooks/debug/hits',
} as const;

/** Only this origin's script and requests: nothing inline, nothing third-party. */
export const STORE_PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const STORE_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>oncely: store view</title>
<link rel="stylesheet" href="/styles.css">
<style>
  /* The simulator page's styles (/styles.css) set the type, colours and tables; these are the
     store view's own. Values are cut in a cell of their own scroll region, never mid-token. */
  .store-table td, .store-table th { text-align: left; }
  .store-table td { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; }
  .store-table td.wrap { white-space: normal; overflow-wrap: anywhere; min-width: 8rem; max-width: 22rem; }
  .status-line { color: var(--muted, #4b5563); }
  .status-line.error { color: var(--bad, #b91c1c); font-weight: 600; }
  .empty { color: var(--muted, #4b5563); font-style: italic; }
  #token-form input { font: inherit; width: 24rem; max-width: 100%; padding: 0.35rem 0.5rem; }
  h2 small { font-weight: normal; font-size: 0.85rem; color: var(--muted, #4b5563); }
</style>
</head>
<body>
<header class="page-header">
<h1>Store view</h1>
<p class="small"><a href="/">the simulator page</a> · <span id="status" class="status-line">not connected</span> <button id="forget" type="button" class="secondary" hidden>forget token</button></p>
<p class="small">Newest first. Times are UTC.</p>
</header>
<main>
<form id="token-form" hidden>
  <p><label>Access token (printed by <code>npx oncely serve</code>): <input id="token" type="password" autocomplete="off" required></label>
  <button type="submit" class="primary">show my store</button></p>
</form>
<h2>Dropbox rows <span id="dropbox-count"></span> <small>GET ${STORE_FEEDS.dropbox}</small></h2>
<div class="table-scroll" tabindex="0" role="region" aria-label="Dropbox rows"><table class="numbers store-table"><thead><tr><th>key</th><th>student</th><th>assignment</th><th>status</th><th>writes</th></tr></thead><tbody id="dropbox"></tbody></table></div>
<h2>Ledger receipts <span id="receipts-count"></span> <small>GET ${STORE_FEEDS.receipts}</small></h2>
<p id="sweep" class="empty"></p>
<div class="table-scroll" tabindex="0" role="region" aria-label="Ledger receipts"><table class="numbers store-table"><thead><tr><th>key</th><th>caller</th><th>fingerprint</th><th>state</th><th>status</th><th>first seen</th><th>expires</th></tr></thead><tbody id="receipts"></tbody></table></div>
<h2>Hook hits <small>GET ${STORE_FEEDS.hooks}</small></h2>
<div class="table-scroll" tabindex="0" role="region" aria-label="Hook hits"><table class="numbers store-table"><thead><tr><th>#</th><th>at</th><th>method</th><th>path</th><th>key</th><th>answer</th><th>status</th></tr></thead><tbody id="hooks"></tbody></table></div>
</main>
<script type="module" src="${STORE_SCRIPT_PATH}"></script>
</body>
</html>
`;

export const STORE_PAGE_SCRIPT = `// oncely store view: polls the caller's feeds every second while the page is visible.
const TOKEN_KEY = 'oncely-token';
const FEEDS = ${JSON.stringify(STORE_FEEDS)};
const $ = (id) => document.getElementById(id);

const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
if (fromHash) {
  sessionStorage.setItem(TOKEN_KEY, fromHash);
  history.replaceState(null, '', location.pathname + location.search);
}

function setStatus(text, isError) {
  $('status').textContent = text;
  $('status').className = isError ? 'status-line error' : 'status-line';
}

function showForm(message) {
  $('token-form').hidden = false;
  $('forget').hidden = true;
  setStatus(message, Boolean(message));
}

// One time format everywhere: "2026-12-01 00:08:37" in UTC (the heading says so). The feeds send
// ISO strings or epoch milliseconds (PostgreSQL's BIGINT arrives as a string of digits).
const toDate = (value) => new Date(typeof value === 'string' && /^\\d+$/.test(value) ? Number(value) : value);
function utc(value) {
  if (value === null || value === undefined || value === '') return '';
  const date = toDate(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString().slice(0, 19).replace('T', ' ');
}

// cells(row) gives [value, wrap?] pairs: a wrapping cell holds free text (a key, a name, a path).
function fill(tbodyId, rows, cells) {
  const tbody = $(tbodyId);
  tbody.replaceChildren();
  if (rows.length === 0) {
    const tr = tbody.insertRow();
    const td = tr.insertCell();
    td.colSpan = 9;
    td.className = 'empty';
    td.textContent = 'nothing yet';
    return;
  }
  for (const row of rows) {
    const tr = tbody.insertRow();
    for (const [value, wrap] of cells(row)) {
      const td = tr.insertCell();
      if (wrap) td.className = 'wrap';
      td.textContent = value === null || value === undefined ? '' : String(value);
    }
  }
}

/** Newest first, whatever order a feed sends (the dropbox and the hits come oldest first). */
const newestFirst = (rows, at) => [...rows].sort((a, b) => at(b) - at(a));
const time = (value) => toDate(value).getTime() || 0;

// The listings send their newest 100 rows; /store?limit=N asks them for N (1 to 1000).
const LIMIT = new URLSearchParams(location.search).get('limit');
const limited = (path) => (LIMIT === null ? path : path + '?limit=' + encodeURIComponent(LIMIT));

async function feed(path, token) {
  const response = await fetch(path, { headers: { authorization: 'Bearer ' + token }, cache: 'no-store' });
  if (response.status === 401) throw Object.assign(new Error('the token was refused'), { unauthorized: true });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    throw new Error(path + ' answered ' + response.status + (typeof problem.detail === 'string' ? ': ' + problem.detail : ''));
  }
  return response.json();
}

// The retention sweep runs in bounded steps off the request path; its rows left drain to 0.
function describeSweep(sweep) {
  if (!sweep || sweep.startedAt === null) return 'retention sweep: not run yet';
  const done = sweep.tombstoned + ' receipts expired, ' + sweep.deleted + ' tombstones deleted in ' + sweep.batches + ' steps';
  if (sweep.running) return 'retention sweep running: ' + sweep.rowsLeft + ' rows left; ' + done;
  const when = utc(sweep.finishedAt) + ' UTC';
  return (sweep.interrupted ? 'retention sweep stopped at ' + when + ' with ' + sweep.rowsLeft + ' rows left; ' : 'retention sweep finished at ' + when + ': ') + done;
}

function count(id, listing, shown) {
  $(id).textContent = listing.truncated ? '(the newest ' + shown + ' of ' + listing.total + ')' : '(' + listing.total + ')';
}

let timer;
async function refresh() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return showForm('');
  try {
    const [dropbox, receipts, hooks] = await Promise.all([feed(limited(FEEDS.dropbox), token), feed(limited(FEEDS.receipts), token), feed(limited(FEEDS.hooks), token)]);
    fill('dropbox', dropbox.rows.slice().reverse(), (r) => [[r.key, true], [r.student, true], [r.assignment, true], [r.status], [r.writes]]);
    count('dropbox-count', dropbox, dropbox.rows.length);
    fill('receipts', newestFirst(receipts.receipts, (r) => time(r.firstSeenAt)), (r) => [[r.key, true], [r.caller, true], [r.fingerprint.slice(0, 16) + '…'], [r.state], [r.status], [utc(r.firstSeenAt)], [utc(r.expiresAt)]]);
    count('receipts-count', receipts, receipts.receipts.length);
    $('sweep').textContent = describeSweep(receipts.sweep);
    fill('hooks', newestFirst(hooks.hits, (h) => Number(h.seq)), (h) => [[h.seq], [utc(h.at)], [h.method], [h.path, true], [h.key, true], [h.answer], [h.status === null ? 'dropped' : h.status]]);
    $('token-form').hidden = true;
    $('forget').hidden = false;
    setStatus('caller ' + dropbox.caller + ' · updated ' + utc(Date.now()) + ' UTC', false);
  } catch (error) {
    if (error.unauthorized) {
      sessionStorage.removeItem(TOKEN_KEY);
      return showForm('the token was refused; enter another');
    }
    setStatus(String(error.message || error), true);
  } finally {
    clearTimeout(timer);
    if (sessionStorage.getItem(TOKEN_KEY) && !document.hidden) timer = setTimeout(refresh, 1000);
  }
}

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
  $('token').value = '';
  refresh();
});
$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  clearTimeout(timer);
  for (const id of ['dropbox', 'receipts', 'hooks', 'dropbox-count', 'receipts-count']) $(id).replaceChildren();
  showForm('');
});
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refresh();
});
refresh();
`;
