import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root, from a compiled test file in dist/test/…: tests read fixtures from the source tree. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}

/** The compiled CLI entry point. */
export const CLI = repoPath('packages', 'cli', 'dist', 'cli', 'main.js');

/** The sources of the library package (`oncely`), from the repository root. */
export const LIBRARY_SRC = 'packages/oncely/src';
/** The sources of the CLI package (`@oncely/cli`): the CLI, the server, the labs, the simulator. */
export const CLI_SRC = 'packages/cli/src';
/** The CLI package's page (the simulator and the outbox view), and its sources. */
export const WEB = 'packages/cli/web';
export const WEB_SRC = 'packages/cli/web/src';
