export { type Clock, systemClock, abortReason } from './clock.js';
export { VirtualClock, type VirtualClockOptions } from './virtual-clock.js';
export { type Random, systemRandom, seededRandom } from './random.js';
