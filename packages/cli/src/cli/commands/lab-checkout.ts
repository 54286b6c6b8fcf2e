import type { Command } from 'commander';
import { InvalidOptionError } from 'oncely';
import { importOptionalDriver } from '../../shared/optional-driver.js';
import { processIo, type CliIo } from '../cli-io.js';

/** `oncely lab checkout`: a checkout killed between its steps; naive charges twice, stepped once. */
export function registerLabCheckout(lab: Command, io: CliIo = processIo): void {
  lab
    .command('checkout')
    .description(
      'a checkout server SIGKILLed between its steps and retried: a naive handler charges twice, one with step() once',
    )
    .option('--seed <n>', "seed for the client's jitter", '7')
    .option('--json', 'print the same facts as JSON')
    .addHelpText(
      'after',
      `
The checkout charges a mock payment service, writes the order and queues the confirmation
email as an outbox intent (journal.recordWithin). The server runs as a child process on a
SQLite file behind oncely's ledger; the lab SIGKILLs it at a step boundary (in the charge,
after it, before the receipt), starts it again, and oncely's client retries under the same
Idempotency-Key. The naive handler runs the checkout again from the top; the stepped one
(step(name, fn), docs/steps.md) skips the recorded steps and sends the charge under its step
key. The client's clock is virtual (its wait is the restart): one seed, one printout.`,
    )
    .action(async (flags: { seed: string; json?: boolean }) => {
      const seed = Number(flags.seed);
      if (!Number.isSafeInteger(seed))
        throw new InvalidOptionError('--seed', flags.seed, 'an integer');
      const lab = await importOptionalDriver(
        'better-sqlite3',
        'the checkout lab (a SQLite database)',
        () => import('../../lab/checkout/checkout-lab.js'),
      );
      const { formatCheckoutLab } = await import('../../lab/checkout/checkout-lab-report.js');
      const result = await lab.runCheckoutLab({ seed });
      io.out(flags.json ? `${JSON.stringify(result, null, 2)}\n` : formatCheckoutLab(result));
    });
}
