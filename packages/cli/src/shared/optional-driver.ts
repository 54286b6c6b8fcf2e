import { OncelyError } from 'oncely';

/**
 * The database drivers are optional peer dependencies: an app that only retries, or only uses
 * PostgreSQL, never installs (or compiles) better-sqlite3, and one on SQLite never installs pg.
 * The code that needs one loads it here, on first use, and a missing driver is one clear error.
 */
export const OPTIONAL_DRIVERS = { 'better-sqlite3': '12', pg: '8' } as const;
export type OptionalDriver = keyof typeof OPTIONAL_DRIVERS;

/** `load` is the call site's own `() => import('pg')`, so the module keeps its types. */
export async function importOptionalDriver<T>(
  name: OptionalDriver,
  purpose: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (cause) {
    const missing =
      (cause as NodeJS.ErrnoException | undefined)?.code === 'ERR_MODULE_NOT_FOUND' &&
      String((cause as Error).message).includes(`'${name}'`);
    if (!missing) throw cause;
    throw new OncelyError(
      'driver_missing',
      `${purpose} needs the ${name} package (an optional peer dependency of oncely): npm install ${name}@${OPTIONAL_DRIVERS[name]}`,
      { cause },
    );
  }
}
