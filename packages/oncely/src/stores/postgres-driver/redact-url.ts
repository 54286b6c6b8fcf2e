// Kept apart from open-postgres-pool.ts, which loads pg: the CLI redacts URLs without the driver.
/** The URL with its password replaced: what a banner or an error may show. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}
