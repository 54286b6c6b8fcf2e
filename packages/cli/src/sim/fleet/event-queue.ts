/**
 * The discrete-event engine's agenda: events ordered by time, ties broken by the order they were
 * scheduled, so a run is a pure function of its seed. A binary heap over parallel arrays: a fleet
 * run schedules millions of events and objects per event would cost more than the model.
 */
export class EventQueue {
  #at: number[] = [];
  #seq: number[] = [];
  #kind: number[] = [];
  #actor: number[] = [];
  #data: number[] = [];
  #size = 0;
  #nextSeq = 0;
  /** The time of the event last taken: the simulation's now. */
  now = 0;

  get size(): number {
    return this.#size;
  }

  /** Schedules event `kind` for `actor` (with one number of payload) at time `at` (never before now). */
  push(at: number, kind: number, actor: number, data = 0): void {
    let i = this.#size++;
    const seq = this.#nextSeq++;
    const when = at < this.now ? this.now : at;
    // Sift up.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(when, seq, parent)) break;
      this.#move(parent, i);
      i = parent;
    }
    this.#set(i, when, seq, kind, actor, data);
  }

  /**
   * Takes the earliest event and returns its kind (or -1 when none is left); its time becomes
   * `now`, its actor and data are in `actor` and `data` until the next pop.
   */
  pop(): number {
    if (this.#size === 0) return -1;
    this.now = this.#at[0]!;
    const kind = this.#kind[0]!;
    this.actor = this.#actor[0]!;
    this.data = this.#data[0]!;
    const last = --this.#size;
    if (last > 0) {
      const at = this.#at[last]!;
      const seq = this.#seq[last]!;
      const k = this.#kind[last]!;
      const a = this.#actor[last]!;
      const d = this.#data[last]!;
      let i = 0;
      // Sift down.
      for (;;) {
        const left = 2 * i + 1;
        if (left >= last) break;
        const right = left + 1;
        const child = right < last && this.#lessAt(right, left) ? right : left;
        if (!this.#lessThan(child, at, seq)) break;
        this.#move(child, i);
        i = child;
      }
      this.#set(i, at, seq, k, a, d);
    }
    return kind;
  }

  actor = 0;
  data = 0;

  #before(at: number, seq: number, j: number): boolean {
    const other = this.#at[j]!;
    return at < other || (at === other && seq < this.#seq[j]!);
  }

  #lessAt(i: number, j: number): boolean {
    return this.#before(this.#at[i]!, this.#seq[i]!, j);
  }

  /** Whether slot `i` comes before the event (at, seq). */
  #lessThan(i: number, at: number, seq: number): boolean {
    const mine = this.#at[i]!;
    return mine < at || (mine === at && this.#seq[i]! < seq);
  }

  #move(from: number, to: number): void {
    this.#set(
      to,
      this.#at[from]!,
      this.#seq[from]!,
      this.#kind[from]!,
      this.#actor[from]!,
      this.#data[from]!,
    );
  }

  #set(i: number, at: number, seq: number, kind: number, actor: number, data: number): void {
    this.#at[i] = at;
    this.#seq[i] = seq;
    this.#kind[i] = kind;
    this.#actor[i] = actor;
    this.#data[i] = data;
  }
}
