/**
 * What an endpoint id may be (the journal's own rule): the API's paths and bodies and its
 * OpenAPI document say it in one place.
 */
export const ENDPOINT_ID_PATTERN = '^[A-Za-z0-9._-]{1,64}$';

const ENDPOINT_ID = new RegExp(ENDPOINT_ID_PATTERN);

/** The OpenAPI schema of an endpoint id. */
export const endpointIdSchema = { type: 'string', pattern: ENDPOINT_ID_PATTERN } as const;

export function isEndpointId(text: string): boolean {
  return ENDPOINT_ID.test(text);
}
