import {
  batchSettingById,
  resolveWorldParams,
  type BatchSettingId,
  type WorldParams,
} from '@oncely/cli/sim/index.js';

/**
 * "Try this first", after the simulator write-up's guide (docs/origins.md): each step is one of the batch's predeclared settings,
 * applied to the current seed, so the world a person looks at is one the batch also averages.
 */
export interface GuideStep {
  readonly setting: BatchSettingId;
  readonly button: string;
  readonly look: string;
}

export const GUIDE_STEPS: readonly GuideStep[] = [
  {
    setting: 'retention-8',
    button: 'Key retention: 8 ticks',
    look: 'An old key expires; its effect does not disappear. Find a red diamond on Retry + key: the receipt of the first effect was swallowed, the sender retried, and the key was gone.',
  },
  {
    setting: 'credits-24',
    button: 'Credits: 24',
    look: 'Retention back to the whole run, credits cut to 24. Keys stop duplicates, but a keyed send costs two credits: Retry + key leaves jobs undelivered that Retry oldest delivers.',
  },
  {
    setting: 'loss-free',
    button: 'Loss-free channel',
    look: 'Nothing is lost, yet Retry oldest still duplicates: a reply can take up to 12 ticks, longer than the 8-tick retry-after.',
  },
  {
    setting: 'loss-free-retry-after-16',
    button: 'Loss-free, retry after 16',
    look: 'A retry-after longer than the slowest round trip: on a loss-free channel, no retry is needed and none is sent.',
  },
];

/** The parameters of a step: the defaults with the setting's overrides, keeping the seed. */
export function guideParams(step: GuideStep, seed: number): WorldParams {
  return resolveWorldParams({ ...batchSettingById(step.setting)!.overrides, seed });
}
