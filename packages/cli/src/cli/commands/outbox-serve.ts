import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { callersOf } from './serve-flags.js';
import { parsePositiveInt } from './deliver-options.js';
import { journalOptions, openJournal, type JournalFlags } from './journal-options.js';

interface ServeFlags extends JournalFlags {
  host: string;
  port: string;
  tokens?: string;
  devToken: boolean;
  worker?: boolean;
}

/** `oncely outbox serve`: the HTTP API over the journal the workers send from. */
export function registerOutboxServe(outbox: Command, io: CliIo): void {
  journalOptions(
    outbox
      .command('serve')
      .description(
        'an HTTP API on the journal: publish messages, manage endpoints, replay; OpenAPI at /openapi.json',
      )
      .option('--host <host>', 'where to listen', '127.0.0.1')
      .option('--port <port>', 'the port (0 picks a free one)', '8791')
      .option('--tokens <file>', 'caller=token lines: who may call the API (also ONCELY_TOKENS)')
      .option('--no-dev-token', 'do not add the dev caller')
      .option('--worker', 'run an outbox worker in this process too (its attempts in /metrics)'),
  ).action(async (flags: ServeFlags) => {
    const port = flags.port === '0' ? 0 : parsePositiveInt('--port', flags.port);
    const { callers, devToken } = callersOf(flags, io.env);
    const journal = await openJournal(flags);
    const { openApiLedger } = await import('../../outbox-api/outbox-api-ledger.js');
    const { startOutboxApi } = await import('../../outbox-api/outbox-api-server.js');
    const closers: (() => Promise<void>)[] = [() => journal.close()];
    const closeAll = async () => {
      for (const close of closers.reverse()) await close().catch(() => {});
    };
    try {
      await journal.store.ready();
      const api = await openApiLedger(flags);
      closers.push(api.close);
      const server = await startOutboxApi({
        journal,
        ledger: api.ledger,
        callers,
        host: flags.host,
        port,
        worker: flags.worker === true,
        onError: (error) => io.err(`oncely: outbox serve: ${(error as Error).message}\n`),
      });
      closers.push(server.close);
      io.out(`outbox API: ${server.origin}/v1 (OpenAPI: ${server.origin}/openapi.json)\n`);
      if (devToken) io.out(`  dev token   ${devToken}\n`);
      io.out(
        `  metrics     ${server.origin}/metrics${flags.worker ? '' : ' (no worker here: queue and endpoints only)'}\n`,
      );
    } catch (error) {
      await closeAll();
      throw error;
    }
    await new Promise<void>((resolve) => {
      const off = io.onStop(() => {
        off();
        resolve();
      });
    });
    await closeAll();
  });
}
