import { SetMetadata } from '@nestjs/common';
import { InvalidOptionError } from '../../contract/errors.js';
import { MISSING_KEY_MODES, type IdempotencyTuning } from '../idempotency-options.js';

/** What one route (or controller) may set apart from the module's options. */
export type IdempotentRouteOptions = Partial<
  Pick<IdempotencyTuning, 'missingKey' | 'maxBodyBytes'>
>;

/** The metadata key `@Idempotent()` sets on a handler or a controller. */
const IDEMPOTENT_ROUTE = 'oncely:idempotent';

/** The options of `@Idempotent()` without arguments: the module's, one guard for them all. */
export const MODULE_DEFAULTS: IdempotentRouteOptions = Object.freeze({});

/**
 * Marks a route handler, or every handler of a controller, as guarded by the ledger that
 * `OncelyModule.forRoot()` set up: a request of a guarded method (POST, PATCH by default) needs
 * an Idempotency-Key, runs once in the ledger's transaction, and a retry gets the answer again.
 *
 * ```ts
 * @Post('orders')
 * @Idempotent()                                  // or @Idempotent({ missingKey: 'pass-through' })
 * create(@Body() order: OrderDto, @Idempotency('sql') sql: RouteIdempotency['sql']) { ... }
 * ```
 * A handler's options replace its controller's; either's are merged over the module's. They are
 * checked here, where the class is defined: a wrong value fails at start-up, not on a request.
 */
export function Idempotent(options: IdempotentRouteOptions = MODULE_DEFAULTS) {
  const { missingKey, maxBodyBytes } = options;
  if (missingKey !== undefined && !MISSING_KEY_MODES.includes(missingKey))
    throw new InvalidOptionError(
      'missingKey',
      missingKey,
      `one of ${MISSING_KEY_MODES.join(', ')}`,
    );
  if (maxBodyBytes !== undefined && (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0))
    throw new InvalidOptionError('maxBodyBytes', maxBodyBytes, 'a whole number of bytes >= 0');
  return SetMetadata(IDEMPOTENT_ROUTE, options === MODULE_DEFAULTS ? options : { ...options });
}

/** The options of a guarded handler (its own, else its controller's); undefined when unguarded. */
export function idempotentRouteOf(
  handler: object,
  controller: object,
): IdempotentRouteOptions | undefined {
  return (Reflect.getMetadata(IDEMPOTENT_ROUTE, handler) ??
    Reflect.getMetadata(IDEMPOTENT_ROUTE, controller)) as IdempotentRouteOptions | undefined;
}
