import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { processIo, type CliIo } from './cli-io.js';
import { registerDeliver } from './commands/deliver.js';
import { registerHook } from './commands/hook.js';
import { registerLab } from './commands/lab.js';
import { registerLedger } from './commands/ledger.js';
import { registerOutbox } from './commands/outbox.js';
import { registerServe } from './commands/serve.js';
import { registerSim } from './commands/sim.js';
import { commanderErrorLine, commanderExitCode, EXIT, exitWithError } from './exit.js';

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

/**
 * The whole `oncely` command line as a commander program writing to `io`. `main.ts` runs it on
 * the process; tests run it in-process with {@link runCli} and a captured io.
 */
export function createProgram(io: CliIo = processIo): Command {
  const program = new Command()
    .name('oncely')
    .description('Safe retries: one intent, one key, one effect.')
    .version(version, '-V, --version')
    // Commander's own refusals read like every other error: one line, `oncely: …`, exit 2. Set
    // before the commands are added, which inherit it.
    .configureOutput({
      writeOut: (text) => io.out(text),
      writeErr: (text) => io.err(text),
      outputError: (message, write) => write(commanderErrorLine(message)),
    })
    .exitOverride();

  registerServe(program, io);
  registerDeliver(program, io);
  registerOutbox(program, io);
  registerHook(program, io);
  registerLedger(program, io);
  registerLab(program, io);
  registerSim(program, io);
  return program;
}

/**
 * Runs `oncely <args>` (the arguments after the program name) and resolves with its exit code.
 * Bad input is one line on `io.err` and exit 2; a command's own failure, one line and its code.
 */
export async function runCli(args: readonly string[], io: CliIo = processIo): Promise<number> {
  let code: number = EXIT.ok;
  const tracked: CliIo = {
    out: (text) => io.out(text),
    err: (text) => io.err(text),
    exit: (exitCode) => {
      code = exitCode;
      io.exit(exitCode);
    },
    get env() {
      return io.env;
    },
    get errIsTTY() {
      return io.errIsTTY;
    },
  };
  try {
    await createProgram(tracked).parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // The message is out already (commanderErrorLine); --help and --version end here too.
      tracked.exit(commanderExitCode(error));
    } else {
      exitWithError(error, tracked);
    }
  }
  return code;
}
