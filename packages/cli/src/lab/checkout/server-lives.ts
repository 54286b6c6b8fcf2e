import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { CheckoutHandler } from './checkout-route.js';

/** What one life of the server is told. */
export interface ServerLife {
  readonly file: string;
  readonly port: number;
  readonly paymentUrl: string;
  readonly handler: CheckoutHandler;
  /** The ledger's clock starts here: each life an hour after the last, so a dead life's lease is over. */
  readonly startAt: number;
  readonly dieAt?: { readonly order: string; readonly point: string } | undefined;
}

export const ORDERS_TABLE = 'lab_orders';

const SERVER_SCRIPT = new URL('./checkout-server.js', import.meta.url);
/** Each life's ledger clock starts an hour after the last one's: a dead life's lease is over. */
const LIFE_SPACING_MS = 3_600_000;

/** Where a life is to die, or undefined for a life that serves to the end. */
export type DeathPlan = ServerLife['dieAt'];

/**
 * The lab's server across its lives: one child process at a time, started on the same port and
 * SQLite file, SIGKILLed by the parent as soon as it says it reached its kill point. `revive`
 * starts the next life once the last is dead; the lab's client calls it while it waits to retry.
 */
export class ServerLives {
  readonly #base: Omit<ServerLife, 'startAt' | 'dieAt'>;
  readonly #deaths: DeathPlan[];
  readonly #startAt: number;
  #lives = 0;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #dying = false;
  /** Each kill, in order: the order whose request was running and the point it died at. */
  readonly kills: { order: string; point: string }[] = [];

  constructor(base: Omit<ServerLife, 'startAt' | 'dieAt'>, deaths: DeathPlan[], startAt: number) {
    this.#base = base;
    this.#deaths = [...deaths];
    this.#startAt = startAt;
  }

  get lives(): number {
    return this.#lives;
  }

  /** Starts the first life, or the next one after a kill; does nothing while a life serves. */
  async revive(): Promise<void> {
    if (this.#child !== undefined && !this.#dying) return;
    await this.#exited;
    const life: ServerLife = {
      ...this.#base,
      startAt: this.#startAt + this.#lives * LIFE_SPACING_MS,
      dieAt: this.#deaths.shift(),
    };
    this.#lives++;
    const child = spawn(process.execPath, [SERVER_SCRIPT.pathname, JSON.stringify(life)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.#child = child;
    this.#dying = false;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code, signal) =>
        reject(new Error(`the checkout server exited (${signal ?? code}) before it listened`)),
      );
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line === 'listening') resolve();
        const dying = /^dying (\S+) (\S+)$/.exec(line);
        if (dying === null) return;
        this.#dying = true;
        this.kills.push({ order: dying[1]!, point: dying[2]! });
        child.kill('SIGKILL');
      });
    });
  }

  /** Kills the life that serves, if any. */
  async stop(): Promise<void> {
    this.#child?.kill('SIGKILL');
    await this.#exited;
    this.#child = undefined;
  }
}
