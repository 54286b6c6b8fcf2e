/** The outbox view's endpoints: a table with pause / resume / disable / enable, and the filter's choices. */
import { byId, h } from '../dom.js';
import { call, type EndpointJson } from './outbox-client.js';

/** Which actions an endpoint in each state offers (resume never restarts a disabled one). */
const ACTIONS: Readonly<Record<EndpointJson['state'], readonly string[]>> = {
  active: ['pause', 'disable'],
  paused: ['resume', 'disable'],
  disabled: ['enable'],
};

/**
 * Loads the endpoints into their table and the filter's select (keeping the choice made). An
 * action's answer is shown, and `changed` runs after one succeeded (the listing reloads).
 */
export async function loadEndpoints(token: string, changed: () => Promise<void>): Promise<void> {
  const { endpoints } = await call<{ endpoints: EndpointJson[] }>(token, '/api/endpoints');
  const select = byId<HTMLSelectElement>('endpoint');
  const chosen = select.value;
  select.replaceChildren(
    h('option', { value: '' }, 'any endpoint'),
    ...endpoints.map((e) => h('option', { value: e.id, selected: e.id === chosen }, e.id)),
  );
  byId('endpoints-section').hidden = endpoints.length === 0;
  byId('endpoints').replaceChildren(
    ...endpoints.map((e) =>
      endpointRow(token, e, () => loadEndpoints(token, changed).then(changed)),
    ),
  );
}

function endpointRow(token: string, e: EndpointJson, after: () => Promise<void>): HTMLElement {
  const buttons = ACTIONS[e.state].map((action) => {
    const button = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'data-action': action,
        'aria-label': `${action} ${e.id}`,
      },
      action,
    );
    button.addEventListener('click', () => void act(token, e.id, action, after));
    return button;
  });
  return h(
    'tr',
    { 'data-endpoint': e.id },
    h('td', {}, e.id),
    h('td', { class: 'target' }, e.url),
    h(
      'td',
      { class: `state endpoint-${e.state}` },
      e.stateReason ? `${e.state} (${e.stateReason})` : e.state,
    ),
    h('td', { class: 'endpoint-actions' }, ...buttons),
  );
}

async function act(token: string, id: string, action: string, after: () => Promise<void>) {
  const result = byId('endpoint-result');
  try {
    await call(token, `/api/endpoints/${encodeURIComponent(id)}/${action}`, actionBody(action));
    result.textContent = `${id}: ${action} done.`;
    result.className = 'notice';
  } catch (error) {
    result.textContent = error instanceof Error ? error.message : String(error);
    result.className = 'notice notice-error';
  }
  result.hidden = false;
  await after();
}

/** Pause and disable keep the reason typed beside the table (an empty field sends none). */
function actionBody(action: string): { reason?: string } {
  const input = byId<HTMLInputElement>('endpoint-reason');
  const reason = input.value.trim();
  if (reason === '' || (action !== 'pause' && action !== 'disable')) return {};
  input.value = '';
  return { reason };
}
