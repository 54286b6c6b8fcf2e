/**
 * bench/instructions' handle on one build's bench/anchors server (anchors-server.js), run under
 * valgrind's callgrind with its instrumentation off until asked: the warm-up runs at valgrind's
 * plain speed, and each measured window counts the instructions the server process executed
 * (every thread: the JIT's and the GC's too), read from callgrind's dump at the window's end.
 * Instructions, unlike time, do not change with the load other processes put on the machine.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ClientMessage, ServerMessage, ServerSetup } from './anchors-protocol.js';

const run = promisify(execFile);

export class CallgrindServer {
  readonly #child: ChildProcess;
  readonly #dir: string;
  readonly #replies: Array<(message: ServerMessage) => void> = [];
  #failure: Error | undefined;
  #dumps = 0;
  /** Resolves to the app's URL once it listens with every row mounted. */
  readonly ready: Promise<string>;

  /**
   * `serverFile`: a build's dist/bench/anchors-server.js; `dir`: where callgrind writes;
   * `nodeFlags`: given to node itself.
   */
  constructor(
    serverFile: string,
    setup: ServerSetup,
    dir: string,
    nodeFlags: readonly string[] = [],
  ) {
    this.#dir = dir;
    this.#child = fork(serverFile, [JSON.stringify(setup)], {
      execPath: 'valgrind',
      execArgv: [
        '--tool=callgrind',
        '--instr-atstart=no',
        `--callgrind-out-file=${join(dir, 'callgrind.out')}`,
        `--log-file=${join(dir, 'valgrind.log')}`,
        process.execPath,
        ...nodeFlags,
      ],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#child.on('message', (message: ServerMessage) => this.#replies.shift()?.(message));
    this.#child.on('exit', (code, signal) => {
      this.#failure = new Error(`bench/instructions: the server exited (${signal ?? code})`);
    });
    this.ready = this.#reply().then((message) => {
      if (message.type !== 'listening') throw new Error('bench/instructions: no server');
      if (message.skipped.length > 0)
        throw new Error(`bench/instructions: rows not mounted: ${JSON.stringify(message.skipped)}`);
      return `http://127.0.0.1:${message.port}`;
    });
  }

  #reply(): Promise<ServerMessage> {
    return new Promise((resolve, reject) => {
      if (this.#failure) return reject(this.#failure);
      this.#replies.push(resolve);
      this.#child.once('exit', () => reject(this.#failure));
    });
  }

  async #control(...args: string[]): Promise<void> {
    if (this.#failure) throw this.#failure;
    await run('callgrind_control', [...args, String(this.#child.pid)]);
  }

  /** Turns counting on (the warm-up ran without it) and zeroes the count: a window starts. */
  async start(): Promise<void> {
    await this.#control('--instr=on');
    await this.#control('--zero');
  }

  /** Ends the window: the instructions executed since start(). */
  async stop(): Promise<number> {
    await this.#control('--dump');
    this.#dumps++;
    // callgrind numbers its dumps: callgrind.out.1, callgrind.out.2 …
    const file = `callgrind.out.${this.#dumps}`;
    const summary = /^summary: (\d+)/m.exec(readFileSync(join(this.#dir, file), 'utf8'));
    if (!summary) throw new Error(`bench/instructions: no summary in ${file}`);
    return Number(summary[1]);
  }

  /** Closes the app and its stores (the PostgreSQL schema is dropped) and waits for the exit. */
  async close(): Promise<void> {
    if (this.#failure) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    const closed = this.#reply();
    this.#child.send({ type: 'close' } satisfies ClientMessage);
    await closed.catch(() => {});
    this.#child.disconnect();
    await exited;
  }
}
