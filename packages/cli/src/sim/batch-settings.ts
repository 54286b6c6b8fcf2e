import type { WorldParams } from './world-params.js';

export const BATCH_SETTING_IDS = [
  'default',
  'loss-free',
  'request-loss-total',
  'receipt-loss-total',
  'retention-8',
  'forget-40',
  'credits-24',
  'credits-100',
  'retry-after-16',
  'loss-free-retry-after-16',
] as const;
export type BatchSettingId = (typeof BATCH_SETTING_IDS)[number];

export interface BatchSetting {
  readonly id: BatchSettingId;
  readonly label: string;
  /** Changes from DEFAULT_WORLD_PARAMS (the seed is set per world). */
  readonly overrides: Partial<Omit<WorldParams, 'seed'>>;
}

/**
 * The ten predeclared settings of the simulator write-up (docs/origins.md) ("ten predeclared settings, including total request
 * loss, total receipt loss, short retention and ledger reset"), declared before any result was
 * looked at, so no setting was picked for the way it came out.
 */
export const BATCH_SETTINGS: readonly BatchSetting[] = [
  { id: 'default', label: 'Default channel', overrides: {} },
  { id: 'loss-free', label: 'Loss-free', overrides: { requestLoss: 0, receiptLoss: 0 } },
  { id: 'request-loss-total', label: 'Total request loss', overrides: { requestLoss: 1 } },
  { id: 'receipt-loss-total', label: 'Total receipt loss', overrides: { receiptLoss: 1 } },
  { id: 'retention-8', label: '8-tick retention', overrides: { retentionTicks: 8 } },
  // With 60 credits the keyed sender has usually spent them all before tick 40, so the reset
  // would change nothing; 100 credits keep keyed sends going past it.
  {
    id: 'forget-40',
    label: 'Forget keys at 40 (100 credits)',
    overrides: { forgetKeysAt: 40, credits: 100 },
  },
  { id: 'credits-24', label: '24 credits', overrides: { credits: 24 } },
  { id: 'credits-100', label: '100 credits', overrides: { credits: 100 } },
  { id: 'retry-after-16', label: 'Retry-after 16', overrides: { retryAfterTicks: 16 } },
  {
    id: 'loss-free-retry-after-16',
    label: 'Loss-free, retry-after 16',
    overrides: { requestLoss: 0, receiptLoss: 0, retryAfterTicks: 16 },
  },
];

/** The setting with this id, or undefined. */
export function batchSettingById(id: string): BatchSetting | undefined {
  return BATCH_SETTINGS.find((setting) => setting.id === id);
}
