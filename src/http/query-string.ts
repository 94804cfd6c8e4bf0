import { parse } from 'node:querystring';

/**
 * Express's `simple` query parser (node:querystring), without its limit of 1000 pairs: past that
 * limit the rest is dropped silently, so `?` + 1000 `&` + `limit=500` was served with the default
 * limit instead of refused. The request line is capped by Node (16 KiB), which bounds the work.
 */
export function parseQueryString(text: string): ReturnType<typeof parse> {
  return parse(text, '&', '=', { maxKeys: 0 });
}
