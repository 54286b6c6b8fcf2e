/**
 * A Prisma 7 client generated from a schema, offline, and transpiled to JavaScript so that
 * node loads it. `prisma generate` downloads a schema engine it does not need to generate, which
 * fails offline; pointing PRISMA_SCHEMA_ENGINE_BINARY at a placeholder executable lets it run.
 * Tables are made with plain SQL, never `prisma migrate` (which needs the engine). The client is
 * written inside the repository so that it finds @prisma/client. Used by bench/orm and the tests.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { transform } from 'esbuild';

/**
 * Generates the client of `schema` (its text; its generator writes to `./generated`) in `dir`,
 * emptied first and removed when the process exits; resolves to the client's module file.
 */
export async function generatePrismaClient(schema: string, dir: string): Promise<string> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'schema.prisma'), schema);
  const engine = join(dir, 'no-schema-engine');
  writeFileSync(engine, '#!/bin/sh\nexit 0\n');
  chmodSync(engine, 0o755);
  const cli = join(dirname(createRequire(import.meta.url).resolve('prisma/package.json')), 'build');
  execFileSync(
    process.execPath,
    [join(cli, 'index.js'), 'generate', '--schema', join(dir, 'schema.prisma')],
    {
      cwd: dir,
      env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: engine, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
      stdio: 'pipe',
    },
  );
  const generated = join(dir, 'generated');
  for (const file of readdirSync(generated, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    const source = await readFile(join(generated, file), 'utf8');
    const { code } = await transform(source, { loader: 'ts', format: 'esm', platform: 'node' });
    writeFileSync(join(generated, file.replace(/\.ts$/, '.js')), code);
  }
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return join(generated, 'client.js');
}
