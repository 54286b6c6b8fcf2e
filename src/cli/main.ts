#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerLab } from './commands/lab.js';
import { registerDeliver } from './commands/deliver.js';
import { registerHook } from './commands/hook.js';
import { registerSim } from './commands/sim.js';
import { registerServe } from './commands/serve.js';
import { exitWithError } from './exit.js';

const program = new Command()
  .name('oncely')
  .description('Safe retries: one intent, one key, one effect.')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

registerServe(program);
registerDeliver(program);
registerHook(program);
registerLab(program);
registerSim(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here too, with exit code 0.
    process.exitCode = error.exitCode;
  } else {
    exitWithError(error);
  }
}
