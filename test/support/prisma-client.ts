import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { generatePrismaClient } from '../../bench/prisma-generate.js';
import { repoPath } from './repo-path.js';

/**
 * A Prisma 7 client for the tests' effects table (test/fixtures/prisma/*.prisma), generated
 * offline (bench/prisma-generate.ts: with a placeholder schema engine). The tables are made with
 * plain SQL, never `prisma migrate` (which needs the engine).
 *
 * Generated once for all the suite's processes, not once per process: `prisma generate` costs
 * about a CPU-second, and the ORM files, their workers and each crash test's child (killed before
 * it could clean up) all open Prisma. The client lives under dist/test/.prisma in a directory
 * named after what it is made from (the schema, the Prisma version, the generating code), so a
 * change to any of them makes a new one; a process that finds it there only imports it.
 */
const made = new Map<string, Promise<string>>();

export function prismaClientModule(provider: 'postgresql' | 'sqlite'): Promise<string> {
  let module = made.get(provider);
  if (module === undefined) {
    module = sharedClient(provider);
    made.set(provider, module);
  }
  return module;
}

const prismaVersion = (): string =>
  (
    JSON.parse(
      readFileSync(createRequire(import.meta.url).resolve('prisma/package.json'), 'utf8'),
    ) as {
      version: string;
    }
  ).version;

async function sharedClient(provider: 'postgresql' | 'sqlite'): Promise<string> {
  const schema = readFileSync(repoPath('test', 'fixtures', 'prisma', `${provider}.prisma`), 'utf8');
  const generator = readFileSync(repoPath('dist', 'bench', 'prisma-generate.js'), 'utf8');
  const key = createHash('sha256')
    .update(`${prismaVersion()}\0${generator}\0${schema}`)
    .digest('hex')
    .slice(0, 16);
  const dir = repoPath('dist', 'test', '.prisma', `${provider}-${key}`);
  const client = join(dir, 'generated', 'client.js');
  if (existsSync(client)) return client;
  // Made aside, then renamed into place whole: a process that finds the directory finds it
  // complete. Two that generate at once both succeed; the second's rename fails, its copy goes.
  const own = `${dir}.${process.pid}`;
  await generatePrismaClient(schema, own);
  try {
    renameSync(own, dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    rmSync(own, { recursive: true, force: true });
  }
  return client;
}
