import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { OncelyError } from 'oncely';

/**
 * Who is calling: bearer tokens map to caller names, and a caller name is the scope of its
 * idempotency keys, so one caller can never see or replay another's receipts.
 */
export interface Callers {
  /** The caller a token belongs to, or undefined. Compares in constant time. */
  callerOf(token: string): string | undefined;
  /** Caller names, for the startup banner (never the tokens). */
  readonly names: readonly string[];
}

/** A caller name: what a scope and a log line can carry safely. */
const CALLER_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Tokens must be long enough not to be guessed. */
const MIN_TOKEN_LENGTH = 16;

/**
 * Reads `caller=token` pairs: one per line in a tokens file (blank lines and `#` comments
 * skipped), or comma-separated in ONCELY_TOKENS. Every refusal names the line and the problem.
 */
export function parseTokenPairs(
  text: string,
  source: string,
): Array<[caller: string, token: string, where: string]> {
  const pairs: Array<[string, string, string]> = [];
  text.split(/[\n,]/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const eq = line.indexOf('=');
    const where = `${source} entry ${index + 1}`;
    if (eq <= 0) throw new OncelyError('invalid_tokens', `${where}: expected caller=token`);
    const caller = line.slice(0, eq).trim();
    const token = line.slice(eq + 1).trim();
    if (!CALLER_NAME.test(caller))
      throw new OncelyError(
        'invalid_tokens',
        `${where}: caller name must be 1-64 of A-Z a-z 0-9 . _ -`,
      );
    if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
      throw new OncelyError(
        'invalid_tokens',
        `${where}: token for ${caller} must be at least ${MIN_TOKEN_LENGTH} characters without spaces`,
      );
    }
    pairs.push([caller, token, where]);
  });
  return pairs;
}

export interface CallersOptions {
  /** A file of caller=token lines. */
  readonly tokensFile?: string | undefined;
  /** Comma-separated caller=token pairs (ONCELY_TOKENS). */
  readonly tokensEnv?: string | undefined;
  /** Adds a `dev` caller with this token, as notebook servers do; printed at start. */
  readonly devToken?: string | undefined;
}

/**
 * The callers of a server. A token given to two callers is refused (`invalid_tokens`, naming both
 * entries, never the token): one of them would silently lose its identity to the other.
 */
export function createCallers(options: CallersOptions): Callers {
  const pairs: Array<[string, string, string]> = [];
  if (options.tokensFile)
    pairs.push(...parseTokenPairs(readTokensFile(options.tokensFile), options.tokensFile));
  if (options.tokensEnv) pairs.push(...parseTokenPairs(options.tokensEnv, 'ONCELY_TOKENS'));
  if (options.devToken) pairs.push(['dev', options.devToken, 'the dev token']);
  // Keyed by a digest so a lookup neither leaks timing about the token nor keeps it in a Map key.
  const byDigest = new Map<string, { caller: string; digest: Buffer; where: string }>();
  for (const [caller, token, where] of pairs) {
    const digest = sha256(token);
    const earlier = byDigest.get(digest.toString('hex'));
    if (earlier !== undefined && earlier.caller !== caller) {
      throw new OncelyError(
        'invalid_tokens',
        `${where}: the token of ${caller} is already the token of ${earlier.caller} (${earlier.where}); give each caller its own`,
      );
    }
    byDigest.set(digest.toString('hex'), { caller, digest, where });
  }
  return {
    names: [...new Set(pairs.map(([caller]) => caller))],
    callerOf(token) {
      const digest = sha256(token);
      const entry = byDigest.get(digest.toString('hex'));
      return entry && timingSafeEqual(entry.digest, digest) ? entry.caller : undefined;
    },
  };
}

/** A fresh dev token: 32 hex characters from the OS's random source. */
export function generateDevToken(): string {
  return randomBytes(16).toString('hex');
}

/** The token of an `Authorization: Bearer …` header, or undefined when absent or malformed. */
export function bearerToken(authorization: string | null): string | undefined {
  const match = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

function readTokensFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    throw new OncelyError(
      'invalid_tokens',
      `cannot read the tokens file ${file}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`,
      { cause },
    );
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
