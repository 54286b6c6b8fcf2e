import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * Which browser the page test uses (docs/design.md, habit 5: an environment variable chooses).
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
  return process.env['ONCELY_REQUIRE_BROWSER'] === '1'
    ? { kind: 'fail', reason: `${reason}, and ONCELY_REQUIRE_BROWSER=1` }
    : { kind: 'skip', reason };
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

/** Headless Chromium (playwright gives it a fresh profile, removed when it closes). */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
}

/**
 * One Chromium for every browser session of a process (each of scripts/run-tests.js's workers
 * keeps one for whichever browser files it takes): starting it costs more than most of their
 * tests. Each session counts itself in
 * when it is registered, has a context of its own (fresh cookies and storage), and the last one
 * to finish closes the browser (or, in a process that runs files in turn, the group's end does).
 * A session registered after it closed launches another.
 */
const shared: { sessions: number; browser: Promise<Browser> | undefined } = {
  sessions: 0,
  browser: undefined,
};

async function openContext(executablePath: string): Promise<BrowserContext> {
  shared.browser ??= launchChromium(executablePath);
  const browser = await shared.browser;
  return browser.newContext({ viewport: { width: 1280, height: 900 } });
}

/** Set by a process that runs several test files in turn (scripts/run-tests.js): run at its end. */
const atGroupEnd = (globalThis as Record<symbol, unknown>)[Symbol.for('oncely.test.atGroupEnd')] as
  | (() => Promise<void>)[]
  | undefined;
let closingAtGroupEnd = false;

async function leaveSharedBrowser(): Promise<void> {
  shared.sessions -= 1;
  if (shared.sessions > 0 || shared.browser === undefined) return;
  // The next browser file this worker takes registers its session only once this one is done:
  // the browser stays open for it, and the worker's end closes it.
  if (atGroupEnd) {
    if (!closingAtGroupEnd) atGroupEnd.push(closeSharedBrowser);
    closingAtGroupEnd = true;
    return;
  }
  await closeSharedBrowser();
}

async function closeSharedBrowser(): Promise<void> {
  if (shared.browser === undefined) return;
  const closing = shared.browser;
  shared.browser = undefined;
  await (await closing.catch(() => undefined))?.close();
}

/** A test file's browser page and the server it visits. */
export interface BrowserSession<S> {
  /** Each browser test's `skip`: false when Chromium is there, else the reason. */
  readonly skip: string | false;
  /** The page, once `before` has launched the browser (a skipped test never reads it). */
  readonly page: Page;
  /** The server, once `before` has started it. */
  readonly server: S;
  /** Page errors and the console messages of the watched types so far, as `type: text`. */
  readonly problems: readonly string[];
}

export interface BrowserSessionOptions<S> {
  readonly startServer: () => Promise<S>;
  /** The console message types that count as problems, besides page errors. @default ['error'] */
  readonly watch?: readonly string[];
  /** Runs first in `before`, only when Chromium is there. */
  readonly prepare?: () => void | Promise<void>;
}

/**
 * One headless Chromium page and one server for a test file: `before` starts both (the page in
 * a context of its own, in the shared browser) and watches the console, `after` closes both.
 * Registers the file's first test, which fails under ONCELY_REQUIRE_BROWSER=1 when Chromium is
 * missing; without Chromium every test given `skip` skips with the reason, printed once.
 */
export function browserSession<S extends { close(): Promise<void> }>(
  what: string,
  options: BrowserSessionOptions<S>,
): BrowserSession<S> {
  const target = browserTarget();
  if (target.kind === 'skip') console.log(`# skipping ${what}: ${target.reason}`);
  const watch = options.watch ?? ['error'];
  const problems: string[] = [];
  let context: BrowserContext | undefined;
  let server: S | undefined;
  let page: Page | undefined;
  if (target.kind === 'ready') shared.sessions += 1;

  before(async () => {
    if (target.kind !== 'ready') return;
    await options.prepare?.();
    [server, context] = await Promise.all([
      options.startServer(),
      openContext(target.executablePath),
    ]);
    page = await context.newPage();
    page.on('console', (message) => {
      if (watch.includes(message.type())) problems.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  });
  after(async () => {
    if (target.kind !== 'ready') return;
    try {
      await context?.close();
      await server?.close();
    } finally {
      await leaveSharedBrowser();
    }
  });

  test('the browser is available (or the test says why it is skipped)', {
    skip: target.kind === 'skip' ? target.reason : false,
  }, () => {
    if (target.kind === 'fail') assert.fail(target.reason);
  });

  const launched = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`no browser for ${what}: a test without { skip } ran`);
    return value;
  };
  return {
    skip: target.kind === 'ready' ? false : target.reason,
    get page() {
      return launched(page);
    },
    get server() {
      return launched(server);
    },
    problems,
  };
}
