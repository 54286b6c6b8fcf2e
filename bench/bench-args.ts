import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * Set by bench/run-all, which hands every benchmark the same arguments
 * (`npm run bench -- --rounds 3`): then each one skips the options it does not take.
 */
export const SHARED_ARGS_ENV = 'ONCELY_BENCH_SHARED_ARGS';

type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** What a command line asks for: a run with its options, the usage, or nothing (a bad argument). */
export type BenchArgs<T extends ParseArgsConfig> =
  | { readonly kind: 'run'; readonly parsed: Parsed<T> }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'bad'; readonly line: string };

/**
 * Reads a benchmark's command line (`config.args`, else the process's) the way the CLI reads its
 * own: strict, unless run-all handed the arguments to every benchmark. `config.options` must
 * declare `help`.
 */
export function parseBenchArgs<T extends ParseArgsConfig>(
  name: string,
  usage: string,
  config: T,
  env: NodeJS.ProcessEnv = process.env,
): BenchArgs<T> {
  let parsed: Parsed<T>;
  try {
    parsed = parseArgs<T>({ ...config, strict: env[SHARED_ARGS_ENV] !== '1' });
  } catch (error) {
    return { kind: 'bad', line: badArgsLine(name, (error as Error).message) };
  }
  if ((parsed.values as { help?: unknown }).help === true) return { kind: 'help', text: usage };
  return { kind: 'run', parsed };
}

/**
 * parseBenchArgs for a benchmark's main: `--help` prints the usage and exits 0; a bad argument
 * prints one line and exits 2, before anything is set up.
 */
export function readBenchArgs<T extends ParseArgsConfig>(
  name: string,
  usage: string,
  config: T,
): Parsed<T> {
  const args = parseBenchArgs(name, usage, config);
  if (args.kind === 'run') return args.parsed;
  if (args.kind === 'help') {
    console.log(args.text);
    process.exit(0);
  }
  console.error(args.line);
  process.exit(2);
}

/** A bad argument found after parsing (a value out of range): one line on stderr, exit 2. */
export function exitOnBadArgs(name: string, message: string): never {
  console.error(badArgsLine(name, message));
  process.exit(2);
}

/**
 * A whole-number option of a benchmark's main: `fallback` when it is absent; not a whole number,
 * or below `min`: one line on stderr, exit 2 (exitOnBadArgs).
 */
export function wholeArgOrExit(
  bench: string,
  option: string,
  raw: unknown,
  fallback: number,
  min = 1,
): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min)
    exitOnBadArgs(bench, `--${option} must be a whole number >= ${min}, got ${String(raw)}`);
  return n;
}

function badArgsLine(name: string, message: string): string {
  // parseArgs explains at length how to pass a value starting with '-': its first sentence is enough.
  const first = message.split('. ')[0]!.replace(/\.$/, '');
  return `bench/${name}: ${first} (--help lists the options)`;
}
