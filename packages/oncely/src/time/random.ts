/** A source of uniform numbers in [0, 1). Injected wherever a choice is random (jitter, keys). */
export interface Random {
  next(): number;
}

/** The platform generator: the only place `Math.random` is read. */
export const systemRandom: Random = { next: () => Math.random() };

/**
 * A seeded generator (sfc32 seeded through splitmix32). Written out rather than taken from a
 * library on purpose: golden traces and the simulator's published numbers depend on the exact
 * sequence, which must not change when a dependency is upgraded.
 *
 * Several seed parts are mixed into one stream, so `seededRandom(seed, job, attempt)` gives an
 * independent, reproducible stream per (seed, job, attempt): the simulator's matched draws.
 */
export function seededRandom(
  ...seedParts: readonly number[]
): Random & { int(min: number, max: number): number } {
  let h = 0x9e3779b9;
  for (const part of seedParts) {
    const n = Math.trunc(part);
    h = splitmix32(h ^ (n >>> 0));
    // `>>> 0` keeps only the low 32 bits, so seeds 1 and 2^32 + 1 (a Date.now() seed, say) would
    // share a stream. Mix the high bits too, only when there are any, so every stream of a seed
    // in the 32-bit range (all published ones) stays exactly as it was.
    if (Math.abs(n) >= 2 ** 32) h = splitmix32(h ^ (Math.floor(n / 2 ** 32) >>> 0));
  }
  let a = splitmix32(h);
  let b = splitmix32(a);
  let c = splitmix32(b);
  let d = splitmix32(c);
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // Discard the first outputs: sfc32 needs a few rounds to mix a weak seed.
  for (let i = 0; i < 12; i++) next();
  return {
    next,
    /** A uniform integer in [min, max], both inclusive. */
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
  };
}

function splitmix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}
