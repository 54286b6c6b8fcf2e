/**
 * Formats values the way Python's repr() prints lists, dicts, strings and ints, so the lab can
 * print the dropbox story's expected output character for character (docs/origins.md).
 */
export function pythonRepr(value: unknown): string {
  if (typeof value === 'string') return pythonString(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (value === null || value === undefined) return 'None';
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([k, v]) => `${pythonString(k)}: ${pythonRepr(v)}`).join(', ')}}`;
  }
  return String(value);
}

/** Python picks single quotes unless the text holds a single quote and no double quote. */
function pythonString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text
    .replace(/\\/g, '\\\\')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\t/g, '\\t')
    .replace(new RegExp(quote, 'g'), `\\${quote}`);
  return `${quote}${escaped}${quote}`;
}
