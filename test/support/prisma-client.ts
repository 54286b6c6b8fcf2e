import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transform } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { repoPath } from './repo-path.js';

/**
 * A Prisma 7 client for the tests' effects table (test/fixtures/prisma/*.prisma), generated once
 * per process and dialect and transpiled to JavaScript, inside the repository so that it finds
 * @prisma/client. `prisma generate` downloads a schema engine it does not need to generate, which
 * fails offline; pointing PRISMA_SCHEMA_ENGINE_BINARY at a placeholder executable lets it run.
 * The tables are made with plain SQL, never `prisma migrate` (which needs the engine).
 */
const made = new Map<string, Promise<string>>();

export function prismaClientModule(provider: 'postgresql' | 'sqlite'): Promise<string> {
  let module = made.get(provider);
  if (module === undefined) {
    module = generate(provider);
    made.set(provider, module);
  }
  return module;
}

async function generate(provider: 'postgresql' | 'sqlite'): Promise<string> {
  const dir = repoPath('dist', 'test', '.prisma', `${process.pid}-${provider}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(repoPath('test', 'fixtures', 'prisma', `${provider}.prisma`), join(dir, 'schema.prisma'));
  const engine = join(dir, 'no-schema-engine');
  writeFileSync(engine, '#!/bin/sh\nexit 0\n');
  chmodSync(engine, 0o755);
  execFileSync(
    process.execPath,
    [
      repoPath('node_modules', 'prisma', 'build', 'index.js'),
      'generate',
      '--schema',
      join(dir, 'schema.prisma'),
    ],
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
