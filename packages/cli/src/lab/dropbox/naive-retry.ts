import { AckLostError, type InMemoryDropbox } from './in-memory-dropbox.js';

/**
 * The dropbox story's broken client (docs/origins.md), kept broken on purpose: a new key on every try makes the dropbox
 * see a new lab each time, so a swallowed ack becomes a second accepted row.
 */
export function naiveRetry(
  box: InMemoryDropbox,
  student: string,
  assignment: string,
  attempts = 4,
): string[] {
  const events: string[] = [];
  for (let i = 0; i < attempts; i++) {
    const key = `${student}:${assignment}:try${i}`;
    try {
      events.push(box.submit(key, student, assignment));
      break;
    } catch (error) {
      if (!(error instanceof AckLostError)) throw error;
      events.push(`timeout:${error.message}`);
    }
  }
  return events;
}
