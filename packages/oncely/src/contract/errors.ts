const BRAND = Symbol.for('oncely.error');

/** Every error oncely throws. `code` is stable and meant for programs; `message` is for people. */
export class OncelyError extends Error {
  readonly [BRAND] = true;
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OncelyError';
    this.code = code;
  }
}

/** True for any oncely error, even one from another copy of the package. */
export function isOncelyError(value: unknown): value is OncelyError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  );
}

/** An option outside its allowed range. Thrown once, where options enter. */
export class InvalidOptionError extends OncelyError {
  readonly option: string;
  readonly allowed: string;
  readonly value: unknown;

  constructor(option: string, value: unknown, allowed: string) {
    super(
      'invalid_option',
      `invalid option ${option}: got ${describe(value)}, expected ${allowed}`,
    );
    this.name = 'InvalidOptionError';
    this.option = option;
    this.value = value;
    this.allowed = allowed;
  }
}

/** A malformed idempotency key. The message names what is wrong. */
export class InvalidKeyError extends OncelyError {
  readonly key: unknown;

  constructor(message: string, key: unknown) {
    super('invalid_key', message);
    this.name = 'InvalidKeyError';
    this.key = key;
  }
}

export function isInvalidOptionError(value: unknown): value is InvalidOptionError {
  return isOncelyError(value) && value.code === 'invalid_option';
}

export function isInvalidKeyError(value: unknown): value is InvalidKeyError {
  return isOncelyError(value) && value.code === 'invalid_key';
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null)
    return String(value);
  return typeof value;
}
