/**
 * A recording of `oncely lab checkout --seed 7 --json` (packages/cli/src/lab/checkout), shown by
 * the page's checkout panel. The lab runs real child processes and SIGKILLs them, which a page
 * cannot; test/apps/lab/checkout-lab.test.ts runs the lab and fails when this differs from it
 * (then paste the command's output here again).
 */
export interface CheckoutOrderRecording {
  readonly order: string;
  readonly killedAt: string;
  readonly attempts: number;
  readonly waitsMs: readonly number[];
  readonly status: number | undefined;
  readonly replaySame: boolean;
  readonly chargeCalls: number;
  readonly charges: number;
  readonly orders: number;
  readonly emails: number;
}

export interface CheckoutRecording {
  readonly seed: number;
  readonly runs: readonly {
    readonly handler: string;
    readonly lives: number;
    readonly orders: readonly CheckoutOrderRecording[];
  }[];
}

export const CHECKOUT_RECORDING: CheckoutRecording = {
  seed: 7,
  runs: [
    {
      handler: 'naive',
      lives: 4,
      orders: [
        {
          order: 'order-1',
          killedAt: 'in-charge',
          attempts: 2,
          waitsMs: [66],
          status: 201,
          replaySame: true,
          chargeCalls: 2,
          charges: 2,
          orders: 1,
          emails: 1,
        },
        {
          order: 'order-2',
          killedAt: 'after-charge',
          attempts: 2,
          waitsMs: [53],
          status: 201,
          replaySame: true,
          chargeCalls: 2,
          charges: 2,
          orders: 1,
          emails: 1,
        },
        {
          order: 'order-3',
          killedAt: 'before-receipt',
          attempts: 2,
          waitsMs: [72],
          status: 201,
          replaySame: true,
          chargeCalls: 2,
          charges: 2,
          orders: 1,
          emails: 1,
        },
      ],
    },
    {
      handler: 'stepped',
      lives: 4,
      orders: [
        {
          order: 'order-1',
          killedAt: 'in-charge',
          attempts: 2,
          waitsMs: [10],
          status: 201,
          replaySame: true,
          chargeCalls: 2,
          charges: 1,
          orders: 1,
          emails: 1,
        },
        {
          order: 'order-2',
          killedAt: 'after-charge',
          attempts: 2,
          waitsMs: [81],
          status: 201,
          replaySame: true,
          chargeCalls: 1,
          charges: 1,
          orders: 1,
          emails: 1,
        },
        {
          order: 'order-3',
          killedAt: 'before-receipt',
          attempts: 2,
          waitsMs: [30],
          status: 201,
          replaySame: true,
          chargeCalls: 1,
          charges: 1,
          orders: 1,
          emails: 1,
        },
      ],
    },
  ],
};
