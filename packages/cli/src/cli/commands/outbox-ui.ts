import type { Command } from 'commander';
import { InvalidOptionError } from 'oncely';
import type { CliIo } from '../cli-io.js';
import { parsePositiveInt } from './deliver-options.js';
import { journalOptions, openJournal, type JournalFlags } from './journal-options.js';

interface UiFlags extends JournalFlags {
  host: string;
  port: string;
  tokenEnv?: string;
}

/** `oncely outbox ui`: the outbox view (dead letters, timelines, replay) in a browser, until stopped. */
export function registerOutboxUi(outbox: Command, io: CliIo): void {
  journalOptions(
    outbox
      .command('ui')
      .description(
        'a web page over the journal: list and filter intents, attempt timelines, replay',
      )
      .option(
        '--host <host>',
        'where to listen; anything but loopback exposes payloads',
        '127.0.0.1',
      )
      .option('--port <port>', 'the port (0 picks a free one)', '8790')
      .option('--token-env <VAR>', 'the access token from this variable (default: a fresh one)'),
  )
    .addHelpText(
      'after',
      "\nEvery API request needs the token printed at start (the printed URL carries it in its #fragment);\na replay is also taken only from the page's own origin, as application/json.",
    )
    .action(async (flags: UiFlags) => {
      const port = flags.port === '0' ? 0 : parsePositiveInt('--port', flags.port);
      const token = flags.tokenEnv === undefined ? undefined : io.env[flags.tokenEnv];
      if (flags.tokenEnv !== undefined && (token === undefined || token.length < 16))
        throw new InvalidOptionError(
          '--token-env',
          flags.tokenEnv,
          'a variable holding at least 16 characters',
        );
      const journal = await openJournal(flags);
      const { startOutboxUi } = await import('../../outbox-ui/outbox-ui-server.js');
      const ui = await startOutboxUi({ journal, host: flags.host, port, token }).catch(
        async (error: unknown) => {
          await journal.close();
          throw error;
        },
      );
      io.out(`outbox view: ${ui.url}\n`);
      await new Promise<void>((resolve) => {
        const off = io.onStop(() => {
          off();
          resolve();
        });
      });
      await ui.close();
      await journal.close();
    });
}
