/**
 * A column's text read once per distinct text: an outbox's rows repeat a few policies, header sets
 * (`{"content-type":"application/json"}`) and secret-header lists (`[]`) thousands of times, and
 * a claim reads a batch of them at once. `read` must return a frozen value, since every row with
 * that text gets the same object.
 */
export function createTextMemo<T>(read: (text: string) => T, limit = 256): (text: string) => T {
  const byText = new Map<string, T>();
  return (text) => {
    let value = byText.get(text);
    if (value === undefined) {
      value = read(text);
      // Bounded: rows with ever-new texts only lose the memo, never correctness.
      if (byText.size >= limit) byText.clear();
      byText.set(text, value);
    }
    return value;
  };
}

/** JSON text as a deeply frozen value, for createTextMemo. */
export function frozenJson<T>(text: string): T {
  return deepFreeze(JSON.parse(text) as T);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
