/**
 * A column's JSON text read once per distinct text: an outbox's rows repeat a few header sets
 * (`{"content-type":"application/json"}`) and secret-header lists (`[]`) thousands of times, and a
 * claim reads a batch of them at once. The value is frozen, deeply, because every row with that
 * text gets the same object (as policyFromJson does for policies).
 */
export function createRowTextMemo<T>(limit = 256): (text: string) => T {
  const byText = new Map<string, T>();
  return (text) => {
    let value = byText.get(text);
    if (value === undefined) {
      value = deepFreeze(JSON.parse(text) as T);
      // Bounded: rows with ever-new texts only lose the memo, never correctness.
      if (byText.size >= limit) byText.clear();
      byText.set(text, value);
    }
    return value;
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
