import { OncelyError } from '../../contract/errors.js';

/**
 * An optional peer dependency, loaded on first use: a missing one is a one-line error naming the
 * package to install, rather than a resolution error from deep inside the import graph.
 */
export function peerLoader<M>(pkg: string, subpath: string, load: () => Promise<M>) {
  let loading: Promise<M> | undefined;
  return (): Promise<M> => {
    loading ??= load().catch((cause: unknown) => {
      loading = undefined;
      throw missingPeer(pkg, subpath, cause);
    });
    return loading;
  };
}

/** The error for an optional peer that is not installed (or fails to load). */
function missingPeer(pkg: string, subpath: string, cause?: unknown): OncelyError {
  return new OncelyError(
    'missing_peer',
    `${subpath} needs the package ${pkg}: npm install ${pkg}`,
    cause === undefined ? undefined : { cause },
  );
}
