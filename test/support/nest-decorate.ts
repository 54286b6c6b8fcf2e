// Nest's decorators are legacy (experimentalDecorators) decorators, and this repository compiles
// with TC39 decorators' rules (no experimentalDecorators, no emitDecoratorMetadata). The fixtures
// call them as TypeScript's legacy emit (__decorate, __param) would, with reflect-metadata's
// Reflect.decorate: the same metadata on the same targets, and no second compiler configuration.
import 'reflect-metadata';

type AnyClass = abstract new (...args: never[]) => unknown;

/** `@A() @B() class X {}`. */
export function decorateClass(target: AnyClass, decorators: ClassDecorator[]): void {
  Reflect.decorate(decorators, target as unknown as Function);
}

/**
 * `@A() @B() method(@P() p, @Q() q) {}` is `decorateMethod(X, 'method', [A(), B()], [[P()], [Q()]])`:
 * method decorators listed top to bottom, then each parameter's, by position.
 */
export function decorateMethod(
  target: AnyClass,
  method: string,
  decorators: MethodDecorator[],
  params: ParameterDecorator[][] = [],
): void {
  const prototype = target.prototype as object;
  const forParams = params.flatMap((list, index) =>
    list.map(
      (decorator): MethodDecorator =>
        (host, key) =>
          decorator(host, key, index),
    ),
  );
  const descriptor = Object.getOwnPropertyDescriptor(prototype, method);
  const decorated = Reflect.decorate([...decorators, ...forParams], prototype, method, descriptor);
  if (decorated !== undefined) Object.defineProperty(prototype, method, decorated);
}
