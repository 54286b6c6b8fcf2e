import type { Server } from 'node:http';
import { OncelyError } from 'oncely';

/** Listens on port and host; a failure is one OncelyError saying what to change. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const where = `${host}:${port}`;
      switch (error.code) {
        case 'EADDRINUSE':
          reject(
            new OncelyError(
              'port_in_use',
              `port ${port} on ${host} is in use; stop the other server or pick another port with --port (0 picks a free one)`,
              { cause: error },
            ),
          );
          return;
        case 'EACCES':
          reject(
            new OncelyError(
              'port_forbidden',
              `not allowed to listen on ${where} (ports below 1024 need privileges); pick another port with --port`,
              { cause: error },
            ),
          );
          return;
        case 'EADDRNOTAVAIL':
        case 'ENOTFOUND':
        case 'EAI_AGAIN':
          reject(
            new OncelyError(
              'host_unavailable',
              `cannot listen on ${host}: not an address of this machine (${error.code})`,
              { cause: error },
            ),
          );
          return;
        default:
          reject(
            new OncelyError('listen_failed', `cannot listen on ${where}: ${error.message}`, {
              cause: error,
            }),
          );
      }
    };
    server.once('error', onError);
    server.listen({ port, host }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
