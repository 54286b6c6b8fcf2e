/**
 * bench/anchors' handle on its server (anchors-server.ts), a child process of its own: autocannon
 * and the server each get a core, and the server's CPU time is its own (process.cpuUsage), so
 * the CPU each request costs can be read apart from the wall time other work on the machine takes.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ClientMessage, ServerMessage, ServerSetup } from './anchors-protocol.js';
import { rowKey, type AnchorsRowId } from './anchors-variants.js';

export interface ServerCount {
  /** Committed rows in the variant's effect table. */
  readonly rows: number;
  /** The server process's CPU time so far (user + system), in microseconds. */
  readonly cpuMicros: number;
}

export class AnchorsServer {
  readonly #child: ChildProcess;
  readonly #waiting: Array<{
    resolve: (message: ServerMessage) => void;
    reject: (error: unknown) => void;
  }> = [];
  /** Resolves once the app listens: its URL and the variants it could not set up. */
  readonly ready: Promise<{ url: string; skipped: Array<{ row: string; reason: string }> }>;

  constructor(setup: ServerSetup, execArgv: readonly string[] = []) {
    this.#child = fork(
      fileURLToPath(new URL('./anchors-server.js', import.meta.url)),
      [JSON.stringify(setup)],
      { execArgv: [...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    this.#child.on('message', (message: ServerMessage) => this.#waiting.shift()?.resolve(message));
    const fail = (error: unknown): void => this.#waiting.splice(0).forEach((w) => w.reject(error));
    this.#child.on('error', fail);
    this.#child.on('exit', (code, signal) =>
      fail(new Error(`bench/anchors: the server exited (${signal ?? `code ${code}`})`)),
    );
    this.ready = this.#next().then((message) => {
      if (message.type !== 'listening') throw new Error('bench/anchors: the server did not start');
      return { url: `http://127.0.0.1:${message.port}`, skipped: message.skipped };
    });
  }

  #next(): Promise<ServerMessage> {
    return new Promise((resolve, reject) => void this.#waiting.push({ resolve, reject }));
  }

  async #ask(message: ClientMessage): Promise<ServerMessage> {
    const reply = this.#next();
    this.#child.send(message);
    return reply;
  }

  /** Once no request is in flight: the row's committed effect rows and the server's CPU time. */
  async count(row: AnchorsRowId): Promise<ServerCount> {
    const reply = await this.#ask({ type: 'count', row: rowKey(row) });
    return reply.type === 'count'
      ? { rows: reply.rows, cpuMicros: reply.cpuMicros }
      : { rows: Number.NaN, cpuMicros: Number.NaN };
  }

  async rows(row: AnchorsRowId): Promise<number> {
    return (await this.count(row)).rows;
  }

  /** Closes the app and its stores, and waits for the process to end. */
  async close(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    await this.#ask({ type: 'close' }).catch(() => {});
    this.#child.disconnect();
    await exited;
  }
}
