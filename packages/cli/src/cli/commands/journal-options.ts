import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { InvalidOptionError, createJournal, type Journal, type JournalStore } from 'oncely';
import { importOptionalDriver } from '../../shared/optional-driver.js';
import { checkJournalFile } from './journal-file.js';

/** Where the CLI keeps its journal unless told otherwise. */
export const DEFAULT_JOURNAL_FILE = 'oncely-data/journal.db';

export interface JournalFlags {
  journal?: string;
  db?: string;
  /** Start a new SQLite journal when none is at the path (journal-file.ts). */
  create?: boolean;
}

/** Adds `--journal FILE`, `--create` and `--db URL` to a command. */
export function journalOptions(
  command: Command,
  journalHelp = `the SQLite journal file (default: ${DEFAULT_JOURNAL_FILE})`,
): Command {
  return command
    .option('--journal <file>', journalHelp)
    .option('--create', 'start a new journal at that path if none is there (else it is refused)')
    .option(
      '--db <url>',
      'a postgres:// URL: the journal on PostgreSQL (shared by several workers)',
    );
}

/**
 * Opens the journal the flags name: PostgreSQL for a postgres:// URL, else SQLite (the default).
 * The driver is an optional peer, loaded here, when a journal is opened.
 */
export async function openJournal(flags: JournalFlags): Promise<Journal<unknown>> {
  if (flags.db !== undefined && flags.journal !== undefined)
    throw new InvalidOptionError('--db', flags.db, 'either --db or --journal, not both');
  let store: JournalStore<unknown>;
  if (flags.db !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(flags.db))
      throw new InvalidOptionError('--db', flags.db, 'a postgres:// URL');
    const url = flags.db;
    const { openPostgresPool, createPostgresJournalStore } = await importOptionalDriver(
      'pg',
      'the PostgreSQL journal (--db)',
      () => import('oncely/stores/postgres'),
    );
    store = createPostgresJournalStore({
      pool: () => openPostgresPool(url),
    }) as JournalStore<unknown>;
  } else {
    const file = flags.journal ?? DEFAULT_JOURNAL_FILE;
    if (file.trim() === '') throw new InvalidOptionError('--journal', file, 'a file path');
    const { openSqliteDatabase, createSqliteJournalStore } = await importOptionalDriver(
      'better-sqlite3',
      'the SQLite journal',
      () => import('oncely/stores/sqlite'),
    );
    checkJournalFile(file, flags.create === true, openSqliteDatabase);
    store = createSqliteJournalStore({
      database: () => {
        if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true }); // --create's folder
        return openSqliteDatabase(file);
      },
    }) as JournalStore<unknown>;
  }
  return createJournal({ store });
}

/**
 * `--secret Authorization=API_TOKEN`: the header's value is read from the environment variable at
 * send time, so it is on neither the command line nor the journal.
 */
export function parseSecrets(
  specs: readonly string[] | undefined,
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const spec of specs ?? []) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)=([A-Za-z_][A-Za-z0-9_]*)$/.exec(spec);
    if (!m)
      throw new InvalidOptionError(
        '--secret',
        spec,
        'HEADER=ENV_VAR, e.g. Authorization=API_TOKEN',
      );
    const value = env[m[2]!];
    if (value === undefined)
      throw new InvalidOptionError('--secret', spec, `an environment variable ${m[2]} that is set`);
    secrets[m[1]!.toLowerCase()] = value;
  }
  return secrets;
}

/** `--signing-secret-env VAR`, `--webhook-secret-env VAR`: Standard Webhooks keys (whsec_…, whsk_…, whpk_…) from the environment. */
export function secretFromEnv(option: string, variable: string, env: NodeJS.ProcessEnv): string {
  const value = env[variable];
  if (!value)
    throw new InvalidOptionError(
      option,
      variable,
      'an environment variable holding Standard Webhooks keys (whsec_, whsk_ or whpk_)',
    );
  return value;
}

export function collect(value: string, all: string[] | undefined): string[] {
  return [...(all ?? []), value];
}

/** Opens the journal, runs `fn`, closes it; SIGINT/SIGTERM abort `signal` (the current batch finishes). */
export async function withJournal(
  flags: JournalFlags,
  fn: (journal: Journal<unknown>, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const journal = await openJournal(flags);
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await fn(journal, controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await journal.close();
  }
}
