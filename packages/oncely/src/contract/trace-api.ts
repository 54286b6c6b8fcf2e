/** Attribute values a span event carries (OpenTelemetry's AttributeValue, the scalar part). */
export type SpanEventAttributes = Record<string, string | number | boolean>;

/**
 * The part of `@opentelemetry/api`'s `trace` object the span-event hooks use (docs/design.md, habit 4: a
 * structural slice, so oncely never imports the package and works without it). Pass `trace` from
 * `@opentelemetry/api` (an optional peer dependency, 1.x).
 */
export interface TraceApi {
  getActiveSpan():
    | { addEvent(name: string, attributes?: SpanEventAttributes): unknown }
    | undefined;
}
