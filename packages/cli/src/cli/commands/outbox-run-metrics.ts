import { InvalidOptionError, type Journal } from 'oncely';
import type { MetricsServer } from '../../outbox-api/metrics-server.js';
import { parsePositiveInt } from './deliver-options.js';

/** What `--metrics-port` and `--metrics-host` give. */
export interface MetricsFlags {
  metricsPort?: string;
  metricsHost?: string;
}

/** The metrics server of `--metrics-port`, its address on stderr (stdout is the run's). */
export async function runMetrics(
  journal: Journal<unknown>,
  flags: MetricsFlags,
  err: (text: string) => void,
): Promise<MetricsServer | undefined> {
  if (flags.metricsPort === undefined) return undefined;
  const port =
    flags.metricsPort === '0' ? 0 : parsePositiveInt('--metrics-port', flags.metricsPort);
  if (port > 65_535)
    throw new InvalidOptionError('--metrics-port', flags.metricsPort, 'a port from 0 to 65535');
  const { startMetricsServer } = await import('../../outbox-api/metrics-server.js');
  const server = await startMetricsServer(journal, port, flags.metricsHost ?? '127.0.0.1');
  err(`metrics: ${server.origin}/metrics\n`);
  return server;
}
