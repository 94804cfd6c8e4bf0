import { parse } from 'node:querystring';

/**
 * Express's `simple` query parser (node:querystring), without its limit of 1000 pairs: past that
 * limit it drops the rest silently, which would serve `?` + 1000 `&` + `limit=500` with the
 * default limit instead of refusing it. Node caps the request line (16 KiB), which bounds the work.
 */
export function parseQueryString(text: string): ReturnType<typeof parse> {
  return parse(text, '&', '=', { maxKeys: 0 });
}
