import type { DynamicModule, FactoryProvider, ModuleMetadata } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import type { AdapterOptions } from '../adapters/adapter-options.js';
import { IdempotencyInterceptor } from './idempotency-interceptor.js';

/**
 * The module's options: those of the Express and Fastify adapters (ledger, methods, missingKey,
 * maxBodyBytes, onError...), with `scopeOf` given the platform's request (Express `req`, Fastify
 * `request`), where an auth guard left `req.user`.
 */
export type NestIdempotencyOptions<Tx = unknown, Req = NestRequest> = AdapterOptions<Tx, Req>;

/** A request as either platform hands it over: its headers and what guards set on it. */
export interface NestRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly [field: string]: unknown;
}

/** `forRootAsync`: the options from a factory, with what it injects (ConfigService, a pool...). */
export interface OncelyModuleAsyncOptions<Tx = unknown, Req = NestRequest> {
  readonly imports?: ModuleMetadata['imports'];
  readonly inject?: FactoryProvider['inject'];
  // Typed as Nest's own FactoryProvider types it: the arguments are what `inject` lists.
  readonly useFactory: (
    ...args: any[]
  ) => NestIdempotencyOptions<Tx, Req> | Promise<NestIdempotencyOptions<Tx, Req>>;
}

/**
 * oncely's ledger for a Nest app, on the Express or the Fastify platform. Import it once, in the
 * root module; it guards the handlers marked `@Idempotent()` (an interceptor on every route that
 * lets the others pass):
 *
 * ```ts
 * @Module({ imports: [OncelyModule.forRoot({ ledger, scopeOf: (req) => req.user?.id })], ... })
 * ```
 * The options are checked here, at start-up.
 */
export class OncelyModule {
  static forRoot<Tx = unknown, Req = NestRequest>(
    options: NestIdempotencyOptions<Tx, Req>,
  ): DynamicModule {
    return {
      module: OncelyModule,
      providers: [{ provide: APP_INTERCEPTOR, useValue: new IdempotencyInterceptor(options) }],
    };
  }

  static forRootAsync<Tx = unknown, Req = NestRequest>(
    options: OncelyModuleAsyncOptions<Tx, Req>,
  ): DynamicModule {
    return {
      module: OncelyModule,
      imports: options.imports ?? [],
      providers: [
        {
          provide: APP_INTERCEPTOR,
          useFactory: async (...args: unknown[]) =>
            new IdempotencyInterceptor(await options.useFactory(...args)),
          inject: options.inject ?? [],
        },
      ],
    };
  }
}
