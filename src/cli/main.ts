#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerLab } from './commands/lab.js';
import { registerDeliver } from './commands/deliver.js';
import { registerOutbox } from './commands/outbox.js';
import { registerHook } from './commands/hook.js';
import { registerSim } from './commands/sim.js';
import { registerServe } from './commands/serve.js';
import { createRequire } from 'node:module';
import { commanderErrorLine, commanderExitCode, exitWithError } from './exit.js';

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

const program = new Command()
  .name('oncely')
  .description('Safe retries: one intent, one key, one effect.')
  .version(version, '-V, --version')
  // Commander's own refusals read like every other error: one line, `oncely: …`, exit 2. Set
  // before the commands are added, which inherit it.
  .configureOutput({ outputError: (message, write) => write(commanderErrorLine(message)) })
  .exitOverride();

registerServe(program);
registerDeliver(program);
registerOutbox(program);
registerHook(program);
registerLab(program);
registerSim(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // The message is out already (commanderErrorLine); --help and --version end here too.
    process.exitCode = commanderExitCode(error);
  } else {
    exitWithError(error);
  }
}
