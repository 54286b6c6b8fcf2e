import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * The script of an installed package's command (what node_modules/.bin links to), to run with
 * `process.execPath`: found through the package's manifest, so no PATH or shell is involved.
 * Also used by scripts/check.js, after the build.
 */
export function packageBin(pkg: string, command: string = pkg): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = require(manifest) as { bin: string | Record<string, string> };
  const file = typeof bin === 'string' ? bin : bin[command];
  if (file === undefined) throw new Error(`${pkg} has no command ${command}`);
  return join(dirname(manifest), file);
}
