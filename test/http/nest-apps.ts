// The orders app of framework-apps.ts as a Nest app, on Nest's Express and Fastify platforms:
// an auth guard that sets `req.user` (what passport's AuthGuard does), a controller whose POST is
// `@Idempotent()`, its answer returned (Nest writes it) or thrown as an HttpException.
import type { AddressInfo } from 'node:net';
import {
  Body,
  Controller,
  Get,
  HttpException,
  Module,
  Post,
  Req,
  Res,
  type CanActivate,
  type Type,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { AbstractHttpAdapter } from '@nestjs/core';
import {
  Idempotency,
  Idempotent,
  OncelyModule,
  type RouteIdempotency,
} from '#oncely/http/nestjs/index.js';
import { decorateClass, decorateMethod } from '../support/nest-decorate.js';
import type { FrameworkApp, OrderBook, RunningApp } from './framework-apps.js';

type WithUser = { user?: { id: string } | undefined; headers: Record<string, unknown> };

/** What the app's route does, as framework-apps.ts defines it for every framework. */
export type PlaceOrder = (
  book: OrderBook,
  user: string,
  body: { item?: unknown; qty?: unknown },
  context: RouteIdempotency | undefined,
) => Promise<{ status: number; json: object; id: string }>;

/** The orders app as a Nest root module. */
export function ordersModule(
  book: OrderBook,
  placeOrder: PlaceOrder,
  userOf: (authorization: string | undefined) => { id: string } | undefined,
  oncely: ReturnType<typeof OncelyModule.forRoot>,
): Type {
  class OrdersController {
    async create(
      body: object,
      context: RouteIdempotency | undefined,
      req: WithUser,
      res: { header(n: string, v: string): unknown },
    ) {
      const order = await placeOrder(book, req.user?.id ?? 'anonymous', body, context);
      if (order.status >= 400) throw new HttpException(order.json, order.status);
      res.header('x-order-id', order.id);
      return order.json;
    }
    list() {
      return { runs: book.runs };
    }
  }
  decorateClass(OrdersController, [Controller('orders')]);
  decorateMethod(
    OrdersController,
    'create',
    [Post(), Idempotent()],
    [[Body()], [Idempotency()], [Req()], [Res({ passthrough: true })]],
  );
  decorateMethod(OrdersController, 'list', [Get()]);

  // The auth step: a global guard, as passport's AuthGuard sets req.user before any interceptor.
  const authenticate: CanActivate = {
    canActivate(context) {
      const req = context.switchToHttp().getRequest<WithUser>();
      req.user = userOf(req.headers['authorization'] as string | undefined);
      return true;
    },
  };
  class AppModule {}
  decorateClass(AppModule, [
    Module({
      imports: [oncely],
      controllers: [OrdersController],
      providers: [{ provide: APP_GUARD, useValue: authenticate }],
    }),
  ]);
  return AppModule;
}

/** Starts a Nest app on an adapter, on port 0. */
export async function startNest(
  module: Type,
  adapter: AbstractHttpAdapter,
  book: OrderBook,
): Promise<RunningApp> {
  const app = await NestFactory.create(module, adapter, { logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, book, close: () => app.close() };
}

/** The NestJS entries of FRAMEWORK_APPS: the same module on each platform. */
export function nestApps(
  newBook: () => OrderBook,
  placeOrder: PlaceOrder,
  userOf: (authorization: string | undefined) => { id: string } | undefined,
): FrameworkApp[] {
  const platforms = [
    ['NestJS (Express)', () => new ExpressAdapter()],
    ['NestJS (Fastify)', () => new FastifyAdapter()],
  ] as const;
  return platforms.map(([name, adapter]) => ({
    name,
    async start(options, scoped) {
      const book = newBook();
      const oncely = OncelyModule.forRoot<unknown, WithUser>({
        ...options,
        ...(scoped ? { scopeOf: (req) => req.user?.id } : {}),
      });
      return startNest(ordersModule(book, placeOrder, userOf, oncely), adapter(), book);
    },
  }));
}
