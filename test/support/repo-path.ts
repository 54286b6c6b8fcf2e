import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root, from a compiled test file in dist/test/…: tests read fixtures from the source tree. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}

/** The compiled CLI entry point. */
export const CLI = repoPath('dist', 'apps', 'cli', 'main.js');
