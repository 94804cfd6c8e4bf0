import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { brotliCompress, constants, gzip } from 'node:zlib';

/*
 * Compression of JSON answers, gzip or br as the request's Accept-Encoding allows (docs/api.md,
 * "Compression"). The lists and feeds are JSON text written by PostgreSQL, a limit=200 page about
 * 200 KB: each answer is compressed whole, once it is known, off the event loop (zlib's one-shot
 * functions run on libuv's thread pool), and sent with its exact Content-Length. The `compression`
 * package (1.8, with brotli) streams every answer through a zlib stream instead, in chunked
 * encoding without a length, which buys nothing for bodies that are complete before the first
 * byte is written.
 *
 * Levels, measured by `npm run bench` (workload b-br, docs/benchmarks.md) on a limit=200 page of
 * companies of 196,551 bytes, median time of one compression on the benchmark machine:
 *
 *   | br quality | bytes  | removed | ms    |     | gzip level | bytes  | removed | ms   |
 *   | 1 (used)   | 36,428 | 81.5%   | 0.41  |     | 1 (used)   | 37,642 | 80.8%   | 0.86 |
 *   | 4          | 31,517 | 84.0%   | 1.45  |     | 4          | 33,520 | 82.9%   | 1.26 |
 *   | 5          | 28,101 | 85.7%   | 2.43  |     | 6          | 29,978 | 84.7%   | 2.03 |
 *   | 11         | 23,676 | 88.0%   | 253.5 |     | 9          | 29,342 | 85.1%   | 3.08 |
 *
 * The fastest level of each already removes about 81% of the bytes; the middle ones remove 2 to 4
 * points more for 1.5 to 6 times the CPU, the best 7 points more for 600 times. CPU is what every
 * tenant's requests share, the bytes saved are each client's alone: brotli quality 1 and gzip
 * level 1, and br when a client accepts both alike (smaller, and twice as fast). On workload (b)
 * (one run, on a machine shared with other test runs) the service then used 1.04x the CPU per
 * request, and sent 0.19x the bytes. Bodies under 1 KiB stay plain: they fit in one packet with
 * their headers either way (the errors, /v1/me).
 */
export const COMPRESSION = {
  /** Smaller bodies are sent as they are. */
  thresholdBytes: 1024,
  gzipLevel: 1,
  brotliQuality: 1,
};

type Coding = 'br' | 'gzip' | 'identity';

/** In order of preference when a client accepts several with the same weight. */
const PREFERENCE: readonly Coding[] = ['br', 'gzip', 'identity'];

// A coding and its parameters; a weight is 0 to 1 with at most three decimals (RFC 9110 12.4.2).
const WEIGHT = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i;

/**
 * The coding to answer with, by the client's Accept-Encoding (RFC 9110 12.5.3): the acceptable one
 * of highest weight (`q`), br then gzip then identity on a tie; identity when the header is absent
 * or nothing else is acceptable (even if the client refused identity too: better plain than
 * nothing). `*` stands for every coding not named; `x-gzip` is gzip; identity, when not named,
 * weighs as little as the least of the codings named.
 */
export function negotiateEncoding(header: string | undefined): Coding {
  if (header === undefined) return 'identity';
  const weights = new Map<string, number>();
  for (const entry of header.split(',')) {
    const [name, ...parameters] = entry.split(';').map((part) => part.trim());
    if (!name) continue;
    let weight = 1;
    let valid = true;
    for (const parameter of parameters) {
      const match = WEIGHT.exec(parameter.replace(/\s*=\s*/, '='));
      if (match) weight = Number(match[1]);
      else valid = false;
    }
    const coding = name.toLowerCase() === 'x-gzip' ? 'gzip' : name.toLowerCase();
    // A malformed entry is ignored; a coding named twice keeps its best weight.
    if (valid) weights.set(coding, Math.max(weight, weights.get(coding) ?? 0));
  }
  const any = weights.get('*');
  // identity not named is acceptable, but a client that weighs its codings prefers each of them to
  // it: it gets the lowest weight listed (as the `negotiator` package reads it).
  const lowest = weights.size > 0 ? Math.min(...weights.values()) : 1;
  const weightOf = (coding: Coding) =>
    weights.get(coding) ?? any ?? (coding === 'identity' ? lowest : 0);
  let best: Coding = 'identity';
  let bestWeight = 0;
  for (const coding of PREFERENCE) {
    const weight = weightOf(coding);
    if (weight > bestWeight) [best, bestWeight] = [coding, weight];
  }
  return best;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Express middleware: `Vary: Accept-Encoding` on every answer, and a JSON body of at least
 * `thresholdBytes` compressed when the client accepts gzip or br. It takes the body where Express's
 * `res.send` receives it (every JSON answer goes through it: `res.json`, the controllers' JSON
 * text), so that Content-Length, HEAD (the same headers as the GET, no body) and everything else
 * Express does stay Express's.
 */
export function compressJson(options = COMPRESSION): RequestHandler {
  return (request: Request, response: Response, next: NextFunction): void => {
    // The answer depends on Accept-Encoding, whether or not this one is compressed.
    response.vary('Accept-Encoding');
    const send = response.send.bind(response) as (body?: unknown) => Response;
    response.send = ((body?: unknown) => {
      const coding = codingFor(request, response, body, options);
      if (coding === 'identity') return send(body);
      const text = body as string | Buffer;
      const type = String(response.getHeader('Content-Type'));
      // What Express would do to a string: the charset in the type, the text in UTF-8.
      if (typeof text === 'string' && !/;\s*charset=/i.test(type)) {
        response.setHeader('Content-Type', `${type}; charset=utf-8`);
      }
      const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
      const done = (error: Error | null, compressed: Buffer) => {
        if (error) return void send(bytes);
        response.setHeader('Content-Encoding', coding);
        send(compressed);
      };
      if (coding === 'br') {
        brotliCompress(
          bytes,
          {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: options.brotliQuality,
              [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
              [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
            },
          },
          done,
        );
      } else {
        gzip(bytes, { level: options.gzipLevel }, done);
      }
      return response;
    }) as Response['send'];
    next();
  };
}

function codingFor(
  request: Request,
  response: Response,
  body: unknown,
  { thresholdBytes }: typeof COMPRESSION,
): Coding {
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return 'identity';
  // A string's UTF-8 is at least as long as the string: only short ones need measuring.
  const length =
    typeof body === 'string' && body.length < thresholdBytes
      ? Buffer.byteLength(body)
      : body.length;
  if (length < thresholdBytes) return 'identity';
  if (response.statusCode === 204 || response.statusCode === 304) return 'identity';
  if (response.getHeader('Content-Encoding') !== undefined) return 'identity';
  if (!JSON_TYPE.test(String(response.getHeader('Content-Type') ?? ''))) return 'identity';
  if (/(?:^|,)\s*no-transform\s*(?:,|$)/i.test(String(response.getHeader('Cache-Control') ?? ''))) {
    return 'identity';
  }
  return negotiateEncoding(request.headers['accept-encoding']);
}
