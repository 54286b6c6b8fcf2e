import type { EndpointRecord } from './endpoint.js';
import type { JournalStore } from './journal-store.js';
import { prepareIntent } from './prepare-intent.js';

/** Where the outbox tells a person that an endpoint was disabled: a URL, or an endpoint by name. */
export type DisabledNotice = { readonly target: string } | { readonly endpoint: string };

/**
 * Records one notification intent per endpoint the receiver's signals disabled, in the same
 * journal, so it is delivered (and retried) like any other message. Its key names the endpoint and
 * the instant: a second worker seeing the same disable records its own, never a lost one.
 */
export async function recordDisabledNotices(
  store: JournalStore<unknown>,
  notice: DisabledNotice | undefined,
  disabled: readonly { endpoint: EndpointRecord; reason: string }[],
  nowMs: number,
): Promise<void> {
  if (notice === undefined || disabled.length === 0) return;
  const via = 'endpoint' in notice ? await store.endpoints?.get(notice.endpoint) : undefined;
  const target = 'target' in notice ? notice.target : via?.url;
  if (target === undefined) return;
  for (const { endpoint, reason } of disabled)
    await store.record(
      prepareIntent(
        {
          key: `endpoint-disabled.${endpoint.id}.${nowMs}`,
          target,
          ...('endpoint' in notice ? { endpoint: notice.endpoint } : {}),
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            type: 'endpoint.disabled',
            endpoint: endpoint.id,
            url: endpoint.url,
            reason,
            at: new Date(nowMs).toISOString(),
          }),
          maxAttempts: 10,
          createdBy: 'oncely-endpoints',
        },
        nowMs,
      ),
    );
}
