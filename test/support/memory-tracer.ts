import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/**
 * A real OpenTelemetry SDK that keeps finished spans in memory: the global tracer provider and an
 * AsyncLocalStorage context manager (so `trace.getActiveSpan()` follows awaits, as in a service).
 */
export function memoryTracer(): {
  inSpan<T>(name: string, fn: () => Promise<T>): Promise<T>;
  finished(): ReadableSpan[];
  shutdown(): Promise<void>;
} {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  trace.setGlobalTracerProvider(provider);
  const tracer = trace.getTracer('oncely-test');
  return {
    inSpan: (name, fn) =>
      tracer.startActiveSpan(name, async (span) => {
        try {
          return await fn();
        } finally {
          span.end();
        }
      }),
    finished: () => exporter.getFinishedSpans(),
    async shutdown() {
      await provider.shutdown();
      manager.disable();
      trace.disable();
      context.disable();
    },
  };
}
