import { AsyncResource } from 'node:async_hooks';

type Bind = typeof AsyncResource.bind;

/**
 * `AsyncResource.bind` as Node defines it (a new AsyncResource of the type given, or of the
 * function's name, the function run in its scope with the given `this`, or the caller's when none
 * is given, and its `length`), without the `asyncResource` property Node also defines on every
 * bound function: deprecated since Node 20 (DEP0172), an accessor of two new `deprecate()` wrappers
 * per call, which kept each bound function, and the request its closure holds, alive through the
 * young generation's collections (an accessor of new functions per object does that by itself:
 * 38 MB promoted of 100,000 small objects, 2.4 MB with a data property).
 *
 * NestJS binds two functions this way for every request through an interceptor (the ETag's,
 * conditional-read.interceptor.ts). Measured on `GET /v1/me` (one key) on Node 24 with the shipped
 * flags, alternated runs of 8 s: with Node's bind, 900 KB promoted to the old generation at each young
 * collection, 18 to 22 full collections, 669 to 727 µs of server CPU per request, 201 to 222 of
 * them in V8's GC threads, 1,448 to 1,530 requests a second; with this one, 3 to 7 KB promoted,
 * 3 or 4 full collections, 374 to 422 µs, 55 to 61 in GC threads, 2,211 to 2,650 requests a second
 * (docs/benchmarks.md, "Nest's interceptors and Node's AsyncResource.bind"). Node's own streams
 * stopped using the static bind for its cost (nodejs/node#59867), so did raw-body (#173), and the
 * property's end of life is proposed (nodejs/node#58618).
 */
export const bindInAsyncScope = function bind(
  this: unknown,
  fn: (...args: unknown[]) => unknown,
  type?: string,
  thisArg?: unknown,
) {
  const resource = new AsyncResource(type || fn.name || 'bound-anonymous-fn');
  const bound =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]) {
          return resource.runInAsyncScope(fn, this, ...args);
        }
      : resource.runInAsyncScope.bind(resource, fn, thisArg);
  Object.defineProperty(bound, 'length', { configurable: true, value: fn.length });
  return bound;
} as unknown as Bind;

/** Installs bindInAsyncScope as `AsyncResource.bind` for the whole process (once is enough). */
export function useLightAsyncResourceBind(): void {
  AsyncResource.bind = bindInAsyncScope;
}
