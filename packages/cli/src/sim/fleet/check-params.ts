import { InvalidOptionError } from 'oncely/policy';

/** The checks every fleet model makes on its parameters, with messages naming the parameter. */
export function checkSeed(seed: number): void {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff)
    throw new InvalidOptionError('seed', seed, 'an integer from 0 to 4294967295');
}

export function checkOneOf(name: string, value: string, allowed: readonly string[]): void {
  if (!allowed.includes(value))
    throw new InvalidOptionError(name, value, `one of ${allowed.join(', ')}`);
}

/** Each named parameter must be a finite number above `min` (or at least it, when `inclusive`). */
export function checkNumbers<P extends object>(
  p: P,
  names: readonly (keyof P & string)[],
  min: number,
  inclusive: boolean,
): void {
  for (const name of names) {
    const value = p[name] as unknown;
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      (inclusive ? value < min : value <= min)
    ) {
      throw new InvalidOptionError(name, value, `a finite number ${inclusive ? '>=' : '>'} ${min}`);
    }
  }
}
