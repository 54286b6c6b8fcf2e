import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { RouteIdempotency } from '../adapters/adapter-options.js';
import { idempotencyOf } from '../adapters/route-context.js';

/**
 * The guarded request's idempotency as a handler parameter, what `idempotencyOf(req)` gives on
 * Express: the scope, the key, `sql` and `tx` (the ledger's transaction: a write through them
 * commits with the receipt, or rolls back with it) and `claim.tookOver`. One field by name:
 *
 * ```ts
 * create(@Body() order: OrderDto, @Idempotency('sql') sql: RouteIdempotency['sql']) { ... }
 * create(@Idempotency() idempotency: RouteIdempotency | undefined) { ... }
 * ```
 * Undefined outside the ledger: an unguarded method (GET), a keyless request passed through.
 */
export const Idempotency = createParamDecorator(
  (field: keyof RouteIdempotency<unknown> | undefined, context: ExecutionContext): unknown => {
    const idempotency = idempotencyOf(context.switchToHttp().getRequest<object>());
    return field === undefined ? idempotency : idempotency?.[field];
  },
);
