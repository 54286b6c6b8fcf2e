import type { Command } from 'commander';
import { importOptionalDriver } from '../../shared/optional-driver.js';
import { processIo, type CliIo } from '../cli-io.js';

/** `oncely lab outbox`: a sender dies between attempts; with a journal one effect, without two. */
export function registerLabOutbox(lab: Command, io: CliIo = processIo): void {
  lab
    .command('outbox')
    .description(
      'a sender dies between attempts: resumed from its journal under the same key (one effect) vs without a journal (two)',
    )
    .option('--json', 'print the same facts as JSON')
    .action(async (options: { json?: boolean }) => {
      const { runOutboxLab } = await importOptionalDriver(
        'better-sqlite3',
        'the outbox lab (a SQLite journal)',
        () => import('../../lab/outbox/outbox-lab.js'),
      );
      const result = await runOutboxLab();
      io.out(
        options.json ? `${JSON.stringify(result, null, 2)}\n` : `${result.lines.join('\n')}\n`,
      );
    });
}
