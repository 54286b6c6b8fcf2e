// A record of the last clean lint, so that `npm test` on a tree that has not changed since does
// not lint it again. ESLint's own cache keys each file by its own content, but the type-aware
// rules read the files it imports, so a cached pass can be stale; this record is keyed by every
// file of the tree instead (each tracked or new, not ignored file, its path and content): any
// change at all, a comment in a doc included, and the whole tree is linted again. The record
// lives where ESLint's cache would (node_modules/.cache/eslint), so removing that forgets it.
// `npm run lint` always lints.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The tree's key, or undefined where git cannot list it (then there is no record to keep). */
export function treeKey(root) {
  let files;
  try {
    files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    })
      .split('\0')
      .filter(Boolean)
      .sort();
  } catch {
    return undefined;
  }
  const hash = createHash('sha256');
  // The installed packages (the parser, the rules, the types they read) are in the lockfile.
  for (const file of files) {
    const path = join(root, file);
    if (!existsSync(path)) continue; // deleted, not yet committed
    hash.update(`${file}\0`);
    hash.update(readFileSync(path));
    hash.update('\0');
  }
  return hash.digest('hex');
}

const recordPath = (root) => join(root, 'node_modules', '.cache', 'eslint', 'oncely-clean-tree');

/** Whether the tree was linted clean as it is now. */
export function lintedClean(root, key) {
  if (key === undefined) return false;
  try {
    return readFileSync(recordPath(root), 'utf8') === key;
  } catch {
    return false;
  }
}

/** Notes that the tree with this key linted clean (no problem, not even a warning). */
export function recordCleanLint(root, key) {
  if (key === undefined) return;
  mkdirSync(dirname(recordPath(root)), { recursive: true });
  writeFileSync(recordPath(root), key);
}
