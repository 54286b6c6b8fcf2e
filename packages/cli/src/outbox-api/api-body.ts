import { InvalidOptionError, isOncelyError } from 'oncely';
import { jsonValidator, problemResponse, type Validate } from 'oncely/http';
import { API_PROBLEMS } from './api-problems.js';

/** A JSON object body: its members by name. */
export type Fields = Readonly<Record<string, unknown>>;

/**
 * The `validate` step of a write route: 415 for another media type, 400 for bytes that are not
 * JSON (oncely/http's jsonValidator), 422 for a value `check` refuses, all before the ledger, so a
 * refusal stores no receipt and never pins the key to a typo. `check` may be async: it runs the
 * journal's own checks (api-checks.ts). `optional`: an empty body stands for `{}`.
 */
export function jsonBody<V>(
  what: string,
  check: (fields: Fields) => V | Promise<V>,
  options: { optional?: boolean } = {},
): Validate<V> {
  const json = jsonValidator<unknown>({
    what,
    check: (value) => ({ ok: true, value }),
    invalid: API_PROBLEMS.invalidRequest,
  });
  return async (input) => {
    let value: unknown = {};
    if (!(options.optional && input.body.byteLength === 0)) {
      const parsed = await json(input);
      if (!parsed.ok) return parsed;
      value = parsed.value;
    }
    try {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new InvalidOptionError('body', value, 'a JSON object');
      return { ok: true, value: await check(value as Fields) };
    } catch (error) {
      if (!isOncelyError(error)) throw error;
      return { ok: false, response: problemResponse(API_PROBLEMS.invalidRequest, error.message) };
    }
  };
}

/** Refuses members not in `allowed`: a misspelt field is an error, not a silent default. */
export function onlyFields(fields: Fields, allowed: readonly string[]): void {
  const unknown = Object.keys(fields).find((name) => !allowed.includes(name));
  if (unknown !== undefined)
    throw new InvalidOptionError(unknown, '(given)', `a field among ${allowed.join(', ')}`);
}

export function optionalString(fields: Fields, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '')
    throw new InvalidOptionError(name, value, 'a non-empty string');
  return value;
}

export function optionalNumber(fields: Fields, name: string): number | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new InvalidOptionError(name, value, 'a number');
  return value;
}
