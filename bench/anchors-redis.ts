/**
 * Redis for bench/anchors: is it there, and what does it keep? The bench starts no Redis; it uses
 * the one at the given URL and reads its persistence settings, so each Redis row states the
 * durability it really had (an acknowledged key survives the app's crash in any case; whether it
 * survives Redis's own restart or a power cut is Redis's appendonly / appendfsync / save).
 */
import { createClient } from '@redis/client';
import type { Durability } from './anchors-variants.js';

export type RedisProbe =
  | { readonly ok: true; readonly durability: Durability; readonly detail: string }
  | { readonly ok: false; readonly reason: string };

/** What the server's settings mean for a key it acknowledged. */
export function redisDurability(config: {
  appendonly: string | undefined;
  appendfsync: string | undefined;
  save: string | undefined;
}): { durability: Durability; detail: string } {
  const setting = `appendonly ${config.appendonly ?? '?'}, appendfsync ${config.appendfsync ?? '?'}, save ${JSON.stringify(config.save ?? '?')}`;
  if (config.appendonly === 'yes' && config.appendfsync === 'always')
    return { durability: 'durable', detail: `${setting}: every write fsynced` };
  if (config.appendonly === 'yes')
    return {
      durability: 'process',
      detail: `${setting}: survives a crash of Redis or the app, may lose about a second on power loss`,
    };
  const snapshots = config.save !== undefined && config.save.trim() !== '';
  return {
    durability: 'memory',
    detail: snapshots
      ? `${setting}: survives the app's crash; a crash of Redis loses everything since its last snapshot`
      : `${setting}: survives the app's crash; a restart of Redis loses every key`,
  };
}

/** Connects once (no retries, a short timeout) and reads the persistence settings. */
export async function probeRedis(url: string, timeoutMs = 1500): Promise<RedisProbe> {
  const client = createClient({
    url,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: false },
  });
  client.on('error', () => {}); // reported through connect()'s rejection
  try {
    await client.connect();
    const read = async (name: string): Promise<string | undefined> => {
      try {
        const reply = (await client.configGet(name)) as Record<string, string>;
        return reply[name];
      } catch {
        return undefined; // CONFIG may be disabled (managed Redis): the row then says '?'
      }
    };
    const config = {
      appendonly: await read('appendonly'),
      appendfsync: await read('appendfsync'),
      save: await read('save'),
    };
    return { ok: true, ...redisDurability(config) };
  } catch (error) {
    return {
      ok: false,
      reason: `Redis at ${url} is not reachable (${error instanceof Error ? error.message : String(error)})`,
    };
  } finally {
    if (client.isOpen) await client.quit().catch(() => {});
  }
}

/** Deletes the keys a run wrote under its own prefixes (they would otherwise live out their TTLs). */
export async function deleteRedisKeys(url: string, patterns: readonly string[]): Promise<number> {
  const client = createClient({ url, socket: { reconnectStrategy: false } });
  client.on('error', () => {});
  let deleted = 0;
  try {
    await client.connect();
    for (const pattern of patterns) {
      for await (const keys of client.scanIterator({ MATCH: pattern, COUNT: 1000 })) {
        if (keys.length > 0) deleted += await client.del(keys);
      }
    }
  } finally {
    if (client.isOpen) await client.quit().catch(() => {});
  }
  return deleted;
}
