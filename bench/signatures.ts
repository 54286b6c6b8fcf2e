/**
 * What a Standard Webhooks signature costs a sender (signWebhook) and a receiver (verifyWebhook):
 * `v1` (HMAC-SHA256, the standardwebhooks package) against `v1a` (ed25519, @noble/curves), and
 * @noble/curves' ed25519 against node:crypto's on the same content, the price of keeping the
 * contract layer free of node:* (it runs in the browser too); the outbox worker signs `v1a` with
 * node:crypto's (the "node:crypto ed25519 sign" row). One body of 1 KiB.
 *
 * Rounds run the variants in a shuffled order (seeded: the same on every run), each timed sample
 * after a short untimed one of the same variant; each sample counts this process's CPU time for
 * `--ms` of work. Each row prints the median operations per CPU second over rounds and the
 * spread (min-max); the ratios are medians of per-round ratios.
 *
 *   npm run build && node dist/bench/signatures.js [--ms 200] [--rounds 9]
 */
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { signWebhook, verifyWebhook } from 'oncely';
import { seededRandom } from 'oncely';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SECRET_KEY = 'whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=';
const PUBLIC_KEY = 'whpk_ZlN4eg7dSSqi0moX9hQUk3orrOouK3QVQSlJa248c/g=';
const AT = 1_700_000_000_000;
const BODY = JSON.stringify({ data: 'x'.repeat(1000) });
const CONTENT = Buffer.from(`evt-1.${AT / 1000}.${BODY}`);
const headersOf = (secret: string) => new Headers(signWebhook(secret, 'evt-1', AT, BODY));
const V1_HEADERS = headersOf(SECRET);
const V1A_HEADERS = headersOf(SECRET_KEY);

// The same ed25519 key as node:crypto KeyObjects (PKCS#8 / SPKI DER headers of RFC 8410).
const seed = Buffer.from(SECRET_KEY.slice('whsk_'.length), 'base64');
const nodePrivate = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
  format: 'der',
  type: 'pkcs8',
});
const nodePublic = createPublicKey(nodePrivate);
const nodeSignature = sign(null, CONTENT, nodePrivate);

const VARIANTS: Record<string, () => unknown> = {
  'v1 sign': () => signWebhook(SECRET, 'evt-1', AT, BODY),
  'v1a sign': () => signWebhook(SECRET_KEY, 'evt-1', AT, BODY),
  'v1 verify': () => verifyWebhook([SECRET], V1_HEADERS, BODY, AT),
  'v1a verify': () => verifyWebhook([PUBLIC_KEY], V1A_HEADERS, BODY, AT),
  'node:crypto ed25519 sign': () => sign(null, CONTENT, nodePrivate),
  'node:crypto ed25519 verify': () => verify(null, CONTENT, nodePublic, nodeSignature),
};

/** Operations per CPU second of `run`, over about `ms` of CPU time. */
function sample(run: () => unknown, ms: number): number {
  const started = process.cpuUsage();
  let count = 0;
  let usedMs = 0;
  while (usedMs < ms) {
    for (let i = 0; i < 20; i++) run();
    count += 20;
    const used = process.cpuUsage(started);
    usedMs = (used.user + used.system) / 1000;
  }
  return (count / usedMs) * 1000;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function main(): void {
  const { values } = readBenchArgs(
    'signatures',
    'usage: node dist/bench/signatures.js [--ms 200] [--rounds 9]',
    {
      options: {
        ms: { type: 'string' },
        rounds: { type: 'string' },
        help: { type: 'boolean' },
      },
    },
  );
  const ms = wholeArgOrExit('signatures', 'ms', values.ms, 200);
  const rounds = wholeArgOrExit('signatures', 'rounds', values.rounds, 9);
  const random = seededRandom(2026);
  const names = Object.keys(VARIANTS);
  const results = new Map<string, number[]>(names.map((n) => [n, []]));
  for (let round = 0; round < rounds; round++) {
    const order = [...names].sort(() => random.next() - 0.5);
    for (const name of order) {
      sample(VARIANTS[name]!, ms / 10);
      results.get(name)!.push(sample(VARIANTS[name]!, ms));
    }
  }
  console.log(`${rounds} rounds of ${ms} ms CPU each; operations per CPU second, 1 KiB body`);
  for (const name of names) {
    const xs = results.get(name)!;
    console.log(
      `${name.padEnd(28)} median ${Math.round(median(xs)).toString().padStart(8)}  spread ${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))}`,
    );
  }
  const ratio = (a: string, b: string) =>
    median(results.get(a)!.map((x, i) => x / results.get(b)![i]!)).toFixed(2);
  console.log(`v1 sign ÷ v1a sign (per-round median): ${ratio('v1 sign', 'v1a sign')}`);
  console.log(`v1 verify ÷ v1a verify: ${ratio('v1 verify', 'v1a verify')}`);
  console.log(
    `node:crypto ÷ v1a sign: ${ratio('node:crypto ed25519 sign', 'v1a sign')}; verify: ${ratio('node:crypto ed25519 verify', 'v1a verify')}`,
  );
  console.log(
    `node:crypto ed25519 sign ÷ v1a sign: ${ratio('node:crypto ed25519 sign', 'v1a sign')}`,
  );
}

main();
