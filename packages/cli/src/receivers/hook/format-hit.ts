import type { HookHit } from './hook-service.js';

export interface FormatHitOptions {
  /** Leave out method, path and body hash: for side-by-side columns. @default false */
  readonly compact?: boolean;
}

/**
 * One arrival as a log line, timed from `originAt` (the first hit, say):
 *
 *   #1   +0.000s  POST /hooks/run-complete  key run-9  body 3f9a1c2e  429 rejected  Retry-After 1
 */
export function formatHit(hit: HookHit, originAt: number, options: FormatHitOptions = {}): string {
  const parts = [
    `#${hit.seq}`.padEnd(3),
    `+${((hit.at - originAt) / 1000).toFixed(3)}s`.padStart(8),
  ];
  if (!options.compact) parts.push(`${hit.method} ${hit.path}`);
  parts.push(`${hit.status ?? '---'} ${hit.answer}`.padEnd(options.compact ? 13 : 0));
  parts.push(hit.key === null ? 'no key' : `key ${shorten(hit.key, options.compact ? 14 : 40)}`);
  if (!options.compact) parts.push(`body ${hit.bodySha256?.slice(0, 8) ?? 'unread'}`);
  if (hit.retryAfter !== undefined) parts.push(`RA ${hit.retryAfter}`);
  return parts.join('  ').trimEnd();
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
