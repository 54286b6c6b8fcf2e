import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { processIo, type CliIo } from './cli-io.js';
import { commanderErrorLine, commanderExitCode, EXIT, exitWithError } from './exit.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

type Register = (program: Command, io: CliIo) => void;

/**
 * Each command's module, in the order `--help` lists them, loaded when it is needed: every
 * command's modules (the server, the journal, the simulator, …) cost a command about twice its
 * own start-up.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Register>>> = {
  serve: async () => (await import('./commands/serve.js')).registerServe,
  deliver: async () => (await import('./commands/deliver-command.js')).registerDeliver,
  outbox: async () => (await import('./commands/outbox.js')).registerOutbox,
  hook: async () => (await import('./commands/hook.js')).registerHook,
  ledger: async () => (await import('./commands/ledger.js')).registerLedger,
  lab: async () => (await import('./commands/lab.js')).registerLab,
  sim: async () => (await import('./commands/sim.js')).registerSim,
};

/** What `oncely` answers with its version alone, whatever follows. */
const VERSION_FLAGS: ReadonlySet<string> = new Set(['-V', '--version']);

/**
 * The `oncely` command line as a commander program writing to `io`: every command, or only
 * `command` (what `oncely COMMAND …` runs; its help and its errors are the same either way).
 * `main.ts` runs it on the process; tests run it in-process with {@link runCli} and a captured io.
 */
export async function createProgram(io: CliIo = processIo, command?: string): Promise<Command> {
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
    .exitOverride()
    .addHelpText(
      'after',
      `\nExit codes (every command; docs/cli.md): 0 done; 1 failure, not the input's; 2 bad input, nothing\nchanged; 3 refused; 4 attempts used up; 5 deadline passed; 6 outcome unknown; 7 a check failed;\n8 not sent; ${EXIT.deadLetters} dead letters made (outbox run --fail-on-dead).`,
    );

  const names =
    command !== undefined && command in COMMANDS
      ? [command]
      : VERSION_FLAGS.has(command ?? '')
        ? [] // the version needs no command's modules
        : Object.keys(COMMANDS);
  const registers = await Promise.all(names.map((name) => COMMANDS[name]!()));
  for (const register of registers) register(program, io);
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
    outFlushed: () => io.outFlushed?.() ?? Promise.resolve(true),
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
    onStop: (listener) => io.onStop(listener),
  };
  try {
    const program = await createProgram(tracked, args[0]);
    await program.parseAsync([...args], { from: 'user' });
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
