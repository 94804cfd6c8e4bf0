import { Injectable, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { pathToRegexp } from 'path-to-regexp';
import { IS_PUBLIC } from './public.decorator';

/**
 * The reads that need a key (GET, and HEAD with it), read off the controllers' own routes: every
 * route needs a key unless it is @Public, as ApiKeyGuard decides. The routing table is the one
 * list; nothing restates it. A path no route has (a 404, answered before any key is read) or one
 * served outside the controllers (the OpenAPI document, /docs) is not keyed.
 */
@Injectable()
export class KeyedRoutes {
  private patterns?: RegExp[];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  /** True when `url` (path and query, as the request line has it) is a keyed read's. */
  isKeyedRead(url: string): boolean {
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    return this.keyedReads().some((pattern) => pattern.test(path));
  }

  /** The keyed GET routes' paths, matched as Express matches them (see app.setup.ts). */
  private keyedReads(): RegExp[] {
    this.patterns ??= this.discovery.getControllers().flatMap(({ metatype, instance }) => {
      if (!metatype || !instance) return [];
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      return this.scanner.getAllMethodNames(prototype).flatMap((name) => {
        const handler = prototype[name] as (...args: unknown[]) => unknown;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method !== RequestMethod.GET) return [];
        if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, metatype])) return [];
        const route = routePath(
          Reflect.getMetadata(PATH_METADATA, metatype) as string,
          Reflect.getMetadata(PATH_METADATA, handler) as string,
        );
        // Case-sensitive and with an optional trailing slash, as the API's router (app.setup.ts).
        return [pathToRegexp(route, { sensitive: true, end: true, trailing: true }).regexp];
      });
    });
    return this.patterns;
  }
}

/** A route's path as Nest joins its controller's and its handler's: `/v1/companies/:id`. */
function routePath(controller: string, handler: string): string {
  const joined = `/${controller}/${handler}`.replace(/\/{2,}/g, '/');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}
