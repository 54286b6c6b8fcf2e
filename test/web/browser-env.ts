import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * Which browser the page test uses (DESIGN habit 5: an environment variable chooses).
 * - /usr/bin/chromium (Debian's package; .ci/run installs it): used; a browser is never downloaded;
 * - missing: skip, with the reason printed;
 * - ONCELY_REQUIRE_BROWSER=1 (CI): missing is a failure, never a skip.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export type BrowserTarget =
  | { readonly kind: 'ready'; readonly executablePath: string }
  | { readonly kind: 'skip'; readonly reason: string }
  | { readonly kind: 'fail'; readonly reason: string };

export function browserTarget(): BrowserTarget {
  if (existsSync(CHROMIUM_PATH)) return { kind: 'ready', executablePath: CHROMIUM_PATH };
  const reason = `${CHROMIUM_PATH} is missing (apt-get install chromium)`;
  return process.env['ONCELY_REQUIRE_BROWSER'] === '1' ? { kind: 'fail', reason: `${reason}, and ONCELY_REQUIRE_BROWSER=1` } : { kind: 'skip', reason };
}

/** The flags of a quiet, local-only headless Chromium. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

export interface LaunchedBrowser {
  readonly context: BrowserContext;
  /** Closes the browser and removes its fresh profile. */
  close(): Promise<void>;
}

/** Headless Chromium on a fresh --user-data-dir (a persistent context is how playwright takes one). */
export async function launchChromium(executablePath: string): Promise<LaunchedBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'oncely-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
