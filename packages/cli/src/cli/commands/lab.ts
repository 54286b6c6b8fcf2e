import type { Command } from 'commander';
import { registerLabCheckout } from './lab-checkout.js';
import { registerLabDropbox } from './lab-dropbox.js';
import { registerLabHook } from './lab-hook.js';
import { registerLabNotes } from './lab-notes.js';
import { registerLabOutbox } from './lab-outbox.js';
import { processIo, type CliIo } from '../cli-io.js';

/** `oncely lab …`: the printed fixtures and demos of the seed documents. */
export function registerLab(program: Command, io: CliIo = processIo): void {
  const lab = program.command('lab').description('run the printed fixtures and demos');
  registerLabCheckout(lab, io);
  registerLabDropbox(lab, io);
  registerLabHook(lab, io);
  registerLabNotes(lab, io);
  registerLabOutbox(lab, io);
}
