import { createJournal, type EndpointInput } from 'oncely';
import { createMemoryJournalStore } from 'oncely/stores/memory';

/**
 * A journal in memory for a dry run: the journal's own checks, run before anything real
 * changes, so input is refused exactly as the journal would refuse it. (The library keeps
 * prepareIntent and prepareEndpoint to itself; a dry run needs neither.)
 */
export const scratchJournal = () => createJournal({ store: createMemoryJournalStore() });

/** Throws what `endpoints.add(input)` would throw, changing nothing. */
export async function checkEndpointByDryRun(input: EndpointInput): Promise<void> {
  await scratchJournal().endpoints.add(input);
}
