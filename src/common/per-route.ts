import type { ExecutionContext, Type } from '@nestjs/common';

type Handler = (...args: never[]) => unknown;

/**
 * What a route's decorators say, read once per route instead of once per request: the guards of
 * every request asked reflect-metadata, which walks the handler's and the controller's metadata
 * maps each time (about 5 % of the CPU of a request that does nothing on Node 24, in a profile of
 * (z): docs/benchmarks.md, "The fixed cost of a request"). Decorators are fixed once the
 * application is built, so the first request of a route reads them for all the others.
 */
export function perRoute<T>(
  read: (handler: Handler, controller: Type) => T,
): (context: ExecutionContext) => T {
  // By controller, then handler: an inherited handler may serve two controllers.
  const byController = new WeakMap<Type, WeakMap<Handler, T>>();
  return (context) => {
    const controller = context.getClass();
    const handler = context.getHandler() as Handler;
    let byHandler = byController.get(controller);
    if (byHandler === undefined) {
      byHandler = new WeakMap();
      byController.set(controller, byHandler);
    }
    if (byHandler.has(handler)) return byHandler.get(handler) as T;
    const value = read(handler, controller);
    byHandler.set(handler, value);
    return value;
  };
}
