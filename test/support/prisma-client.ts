import { readFileSync } from 'node:fs';
import { generatePrismaClient } from '../../bench/prisma-generate.js';
import { repoPath } from './repo-path.js';

/**
 * A Prisma 7 client for the tests' effects table (test/fixtures/prisma/*.prisma), generated once
 * per process and dialect (bench/prisma-generate.ts: offline, with a placeholder schema engine).
 * The tables are made with plain SQL, never `prisma migrate` (which needs the engine).
 */
const made = new Map<string, Promise<string>>();

export function prismaClientModule(provider: 'postgresql' | 'sqlite'): Promise<string> {
  let module = made.get(provider);
  if (module === undefined) {
    const schema = readFileSync(
      repoPath('test', 'fixtures', 'prisma', `${provider}.prisma`),
      'utf8',
    );
    module = generatePrismaClient(
      schema,
      repoPath('dist', 'test', '.prisma', `${process.pid}-${provider}`),
    );
    made.set(provider, module);
  }
  return module;
}
