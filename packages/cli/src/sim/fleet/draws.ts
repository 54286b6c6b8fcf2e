import type { Random } from 'oncely/policy';

/** |Normal(mean, sd)| by Box-Muller (one draw pair per sample: simple and reproducible). */
export function absNormal(random: Random, mean: number, sd: number): number {
  const u = 1 - random.next(); // (0, 1]: log(0) would be -Infinity
  const v = random.next();
  return Math.abs(mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
}

/** Exponential with the given mean (inter-arrival times of a Poisson process, round trips). */
export function exponential(random: Random, mean: number): number {
  return -mean * Math.log(1 - random.next());
}
