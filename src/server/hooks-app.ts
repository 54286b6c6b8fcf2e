import { Hono } from 'hono';
import type { ConnectionControl } from '../http/node-listener.js';
import { parseHookScript, type HookScript } from '../services/hook/hook-script.js';
import { createHookService, type HookHit, type HookService } from '../services/hook/hook-service.js';
import { systemClock, type Clock } from '../time/clock.js';
import { unauthenticatedResponse, type ScopeOf } from './auth.js';

export interface HooksAppOptions {
  readonly scopeOf: ScopeOf;
  /** Every caller's receiver answers from this script (seed 003's grammar). @default '200' */
  readonly script?: string | HookScript;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Where the app is mounted: the receivers' debug routes live under it. @default '/hooks' */
  readonly basePath?: string;
  /** Told about each arrival (for the request log). */
  readonly onHit?: (hit: HookHit, caller: string) => void;
}

export interface HooksApp {
  readonly app: Hono;
  readonly script: HookScript;
  /** The caller's arrivals so far (empty for a caller that sent none). */
  hitsOf(caller: string): readonly HookHit[];
}

/**
 * Seed 003's hostile hook receiver on the server: one receiver per caller, created on its first
 * arrival, so keys, hits and the script's position are scoped like every other key (caller A can
 * neither replay nor see caller B's acks). A token is required, for the hooks and for
 * `debug/hits` alike; `swallow` drops the connection the node adapter passes as `env.connection`.
 */
export function createHooksApp(options: HooksAppOptions): HooksApp {
  const script = typeof options.script === 'object' ? options.script : parseHookScript(options.script ?? '200');
  const clock = options.clock ?? systemClock;
  const basePath = options.basePath ?? '/hooks';
  const receivers = new Map<string, HookService>();

  const receiverOf = (caller: string): HookService => {
    let receiver = receivers.get(caller);
    if (!receiver) {
      const onHit = options.onHit;
      receiver = createHookService({ script, clock, basePath, ...(onHit ? { onHit: (hit: HookHit) => onHit(hit, caller) } : {}) });
      receivers.set(caller, receiver);
    }
    return receiver;
  };

  const app = new Hono<{ Bindings: { connection?: ConnectionControl | undefined } }>();
  app.all('*', async (c) => {
    const caller = options.scopeOf(c.req.raw);
    if (caller === undefined) return unauthenticatedResponse();
    return receiverOf(caller).handle(c.req.raw, c.env?.connection);
  });

  return {
    app: app as unknown as Hono,
    script,
    hitsOf: (caller) => receivers.get(caller)?.hits() ?? [],
  };
}
