// `oncely` as a command for shell scripts, run inside the test's own process: a small shell script
// hands each call (its arguments, environment and working directory) over a unix socket to
// runCli, the program the binary runs, and prints what it wrote and exits with its code. A node
// process per call, loading the whole CLI, cost most of the docs test's time; the binary itself
// is exercised as a process by the end-to-end and package tests.
import { createServer } from 'node:http';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo } from '#cli/cli/cli-io.js';
import { runCli } from '#cli/cli/program.js';

export interface CliHost {
  /** Stops taking calls. */
  close(): Promise<void>;
}

/** `#!/bin/sh` script that runs `oncely "$@"` through the host listening on `socket`. */
function shim(socket: string): string {
  return `#!/bin/sh
call=$(mktemp -d "\${TMPDIR:-/tmp}/oncely-call-XXXXXX") || exit 70
[ $# -eq 0 ] || printf '%s\\0' "$@" > "$call/args"
env -0 > "$call/env"
printf '%s' "$PWD" > "$call/cwd"
code=$(curl -sS --fail --unix-socket '${socket}' --data-binary "$call" http://oncely/) || { rm -rf "$call"; exit 70; }
cat "$call/out"
cat "$call/err" >&2
rm -rf "$call"
exit "$code"
`;
}

/**
 * Writes `dir/oncely` and serves its calls until closed. Calls run one at a time: each runs in
 * its caller's working directory (process.chdir), as the binary would resolve its paths.
 */
export async function startCliHost(dir: string): Promise<CliHost> {
  const socket = join(dir, 'oncely.sock');
  let queue: Promise<unknown> = Promise.resolve();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const turn = queue.then(() => runCall(body));
      queue = turn.catch(() => {});
      turn.then(
        (code) => res.end(String(code)),
        (error: unknown) => {
          res.statusCode = 500;
          res.end(String(error));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  writeFileSync(join(dir, 'oncely'), shim(socket));
  chmodSync(join(dir, 'oncely'), 0o755);
  return {
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function runCall(call: string): Promise<number> {
  const read = (name: string): string => {
    try {
      return readFileSync(join(call, name), 'utf8');
    } catch {
      return '';
    }
  };
  const args = read('args').split('\0').slice(0, -1);
  const env: Record<string, string> = {};
  for (const entry of read('env').split('\0')) {
    const at = entry.indexOf('=');
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  let out = '';
  let err = '';
  const io: CliIo = {
    out: (text) => void (out += text),
    err: (text) => void (err += text),
    exit: () => {},
    env,
    errIsTTY: false,
    onStop: () => () => {}, // nothing here runs until stopped
  };
  const home = process.cwd();
  process.chdir(read('cwd'));
  try {
    return await runCli(args, io);
  } finally {
    process.chdir(home);
    writeFileSync(join(call, 'out'), out);
    writeFileSync(join(call, 'err'), err);
  }
}
