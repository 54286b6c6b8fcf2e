/**
 * The mock payment service's books: every call, and the charges it made. Like a real payment
 * API it dedupes by Idempotency-Key: a call with a key it has seen gets the same charge back.
 * A call without a key is always a new charge. Runs in Node and in the browser.
 */
export interface PaymentCall {
  readonly order: string;
  readonly key: string | undefined;
  readonly charge: string;
  /** True when the key was seen before and the earlier charge was answered. */
  readonly replayed: boolean;
}

export class PaymentBook {
  readonly calls: PaymentCall[] = [];
  readonly #byKey = new Map<string, string>();
  #charges = 0;

  charge(order: string, key: string | undefined): PaymentCall {
    const earlier = key === undefined ? undefined : this.#byKey.get(key);
    const charge = earlier ?? `ch_${String(++this.#charges).padStart(4, '0')}`;
    if (key !== undefined) this.#byKey.set(key, charge);
    const call = { order, key, charge, replayed: earlier !== undefined };
    this.calls.push(call);
    return call;
  }

  /** Charges made (not replayed) for `order`: what the customer's card statement shows. */
  chargesFor(order: string): number {
    return this.calls.filter((c) => c.order === order && !c.replayed).length;
  }

  callsFor(order: string): number {
    return this.calls.filter((c) => c.order === order).length;
  }
}
