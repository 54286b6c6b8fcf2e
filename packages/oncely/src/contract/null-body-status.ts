/**
 * Statuses whose response has no body: the Fetch standard's "null body status" (101, 103, 204,
 * 205, 304; RFC 9110 sections 15.2, 15.3.5, 15.3.6, 15.4.5). A `Response` with one of them must
 * be made with a null body, and whatever a sender wrote after such a head is not its body.
 */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);
