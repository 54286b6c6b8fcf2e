// Screenshots of the pages for a person to look at, in test-output/. No test reads them, and
// encoding them cost the browser tests about a second of CPU and two of their process's time, so
// they are taken only when asked for: ONCELY_TEST_SCREENSHOTS=1 node scripts/run-tests.js web/
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from '../support/repo-path.js';

const OUTPUT = repoPath('test-output');
const wanted = process.env['ONCELY_TEST_SCREENSHOTS'] === '1';

/** A page or a locator. */
interface Shootable {
  screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown>;
}

/** Saves what `target` shows as test-output/`name` when ONCELY_TEST_SCREENSHOTS=1. */
export async function screenshot(
  target: Shootable,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<void> {
  if (!wanted) return;
  mkdirSync(OUTPUT, { recursive: true });
  await target.screenshot({ path: join(OUTPUT, name), ...options });
}
