import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import {
  parseKillLine,
  type ChaosServerConfig,
  type KillPoint,
  type KillSpec,
} from './steps-chaos-protocol.js';

const SCRIPT = new URL('./steps-chaos-server.js', import.meta.url).pathname;

/**
 * The bench's servers, each restarted on its port as soon as it dies (as a supervisor would).
 * Every new life takes the next kill from one shared plan; when the plan is used up, lives
 * serve to the end.
 */
export class ChaosServers {
  readonly kills: KillPoint[] = [];
  /** Deaths that were not a planned kill (a crash): the run fails on any. */
  readonly crashes: string[] = [];
  readonly stderrTail: string[] = [];
  lives = 0;
  readonly #plan: KillSpec[];
  readonly #configs: Omit<ChaosServerConfig, 'kill'>[];
  readonly #children = new Map<string, ChildProcess>();
  #stopping = false;

  constructor(configs: Omit<ChaosServerConfig, 'kill'>[], plan: KillSpec[]) {
    this.#configs = configs;
    this.#plan = [...plan];
  }

  get plannedLeft(): number {
    return this.#plan.length;
  }

  async start(): Promise<void> {
    await Promise.all(this.#configs.map((config) => this.#life(config)));
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    const exits = [...this.#children.values()].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) resolve();
          else child.once('exit', () => resolve()).kill('SIGKILL');
        }),
    );
    await Promise.all(exits);
  }

  #life(base: Omit<ChaosServerConfig, 'kill'>): Promise<void> {
    const config: ChaosServerConfig = { ...base, kill: this.#plan.shift() ?? null };
    this.lives++;
    const child = spawn(process.execPath, [SCRIPT, JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#children.set(base.name, child);
    let killed: KillPoint | undefined;
    createInterface({ input: child.stderr! }).on('line', (line) => {
      this.stderrTail.push(`${base.name}: ${line}`);
      if (this.stderrTail.length > 20) this.stderrTail.shift();
    });
    return new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line === 'listening') resolve();
        killed = parseKillLine(line) ?? killed;
      });
      child.once('exit', (code, signal) => {
        if (this.#stopping) return resolve();
        if (killed !== undefined && signal === 'SIGKILL') this.kills.push(killed);
        else this.crashes.push(`${base.name} exited (${signal ?? code})`);
        reject(new Error(`${base.name} died before it listened`));
        // The next life on the same port, at once (unless the server cannot keep running).
        if (this.crashes.length > 10) return;
        this.#life(base).catch((error: unknown) => this.crashes.push(String(error)));
      });
    });
  }
}
