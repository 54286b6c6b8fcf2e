import type { Command } from 'commander';
import { runDropboxFixtures } from '../../lab/dropbox/dropbox-fixtures.js';
import { dropboxPrintout } from '../../lab/dropbox/dropbox-printout.js';
import { processIo, type CliIo } from '../cli-io.js';

/** `oncely lab dropbox`: the dropbox story's fixtures A–C (docs/origins.md), character for character, then the deadline fixture D. */
export function registerLabDropbox(lab: Command, io: CliIo = processIo): void {
  lab
    .command('dropbox')
    .description(
      'the course dropbox (docs/origins.md): a swallowed ack, naive vs budgeted retry, and the deadline',
    )
    .option('--json', 'print the same facts as JSON')
    .action(async (options: { json?: boolean }) => {
      const fixtures = await runDropboxFixtures();
      if (options.json) {
        io.out(`${JSON.stringify(fixtures, null, 2)}\n`);
        return;
      }
      io.out(`${dropboxPrintout(fixtures).join('\n')}\n`);
    });
}
