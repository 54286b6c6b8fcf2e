import { fork, type ChildProcess } from 'node:child_process';
import type { ArrivalReply } from './outbox-protocol.js';

type Reply = { readonly type: string; readonly prefix?: string; readonly message?: string };

/**
 * A child process of bench/outbox (the receiver, a worker) spoken to over IPC: `ask` sends a
 * request and waits for the reply of the type named (and, for `reached` and `report`, the prefix).
 * A child that fails or exits rejects every wait, so a run never hangs on a dead process.
 */
export class OutboxChild {
  readonly process: ChildProcess;
  readonly #waiting: Array<{
    readonly match: (reply: Reply) => boolean;
    readonly resolve: (reply: Reply) => void;
    readonly reject: (error: Error) => void;
  }> = [];
  readonly #name: string;

  constructor(name: string, script: URL, args: readonly string[] = [], execArgv?: string[]) {
    this.#name = name;
    this.process = fork(script, [...args], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      ...(execArgv ? { execArgv: [...process.execArgv, ...execArgv] } : {}),
    });
    this.process.on('message', (reply: Reply) => {
      if (reply.type === 'failed')
        return this.#failAll(new Error(`bench/outbox: ${name} failed: ${reply.message}`));
      const i = this.#waiting.findIndex((w) => w.match(reply));
      if (i >= 0) this.#waiting.splice(i, 1)[0]!.resolve(reply);
    });
    this.process.on('exit', (code, signal) =>
      this.#failAll(new Error(`bench/outbox: ${name} exited (${signal ?? code})`)),
    );
  }

  #failAll(error: Error): void {
    for (const w of this.#waiting.splice(0)) w.reject(error);
  }

  /** Waits for the next reply of `type` (for `prefix`, if given). */
  next<T extends Reply>(type: T['type'], prefix?: string): Promise<T> {
    if (this.process.exitCode !== null || this.process.signalCode !== null)
      return Promise.reject(new Error(`bench/outbox: ${this.#name} is not running`));
    return new Promise((resolve, reject) =>
      this.#waiting.push({
        match: (reply) => reply.type === type && (prefix === undefined || reply.prefix === prefix),
        resolve: resolve as (reply: Reply) => void,
        reject,
      }),
    );
  }

  ask<T extends Reply>(request: object, type: T['type'], prefix?: string): Promise<T> {
    const reply = this.next<T>(type, prefix);
    this.process.send(request);
    return reply;
  }

  /** When `count` keys of `prefix` have arrived: the time of the last one (monotonicMs). */
  async reached(prefix: string, count: number): Promise<number> {
    const reply = await this.ask<Extract<ArrivalReply, { type: 'reached' }>>(
      { type: 'expect', prefix, count },
      'reached',
      prefix,
    );
    return reply.atMs;
  }

  async report(prefix: string): Promise<Extract<ArrivalReply, { type: 'report' }>['arrivals']> {
    const reply = await this.ask<Extract<ArrivalReply, { type: 'report' }>>(
      { type: 'report', prefix },
      'report',
      prefix,
    );
    return reply.arrivals;
  }

  /**
   * Ends the process and waits for it: asked over IPC first (`graceful`: a worker closes its
   * connections and exits, writing its --cpu-prof profile), SIGTERM after 3 s, SIGKILL 2 s later.
   */
  async kill(graceful = false): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    if (graceful && this.process.connected) this.process.send({ type: 'exit' });
    else this.process.kill('SIGTERM');
    const term = setTimeout(() => this.process.kill('SIGTERM'), graceful ? 3000 : 0);
    const hard = setTimeout(() => this.process.kill('SIGKILL'), graceful ? 5000 : 2000);
    await exited;
    clearTimeout(term);
    clearTimeout(hard);
  }
}
