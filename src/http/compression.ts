import type { Express, Response } from 'express';
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
 * Levels, measured by `npm run bench` (workload b-br, docs/benchmarks.md, "Compression") on a
 * limit=200 page of companies of 196,551 bytes, median time of one compression on the benchmark
 * machine:
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
const CHARSET = /;\s*charset=/i;

/**
 * Every JSON answer's body, on its way out: compressed when it is at least `thresholdBytes` and
 * the client accepts gzip or br. Express's `res.send` for the application (its `app.response`,
 * which Express documents for this), set once at start-up: every JSON answer goes through it
 * (`res.json`, the controllers' JSON text).
 */
export function compressJsonAnswers(server: Express, options = COMPRESSION): void {
  const send = server.response.send;
  server.response.send = function sendJson(this: Response, body?: unknown): Response {
    const type = this.getHeader('Content-Type');
    const isText = typeof body === 'string';
    if (!(isText || Buffer.isBuffer(body)) || typeof type !== 'string' || !JSON_TYPE.test(type)) {
      return send.call(this, body);
    }
    // What Express would do to a string: the charset in the type, the text in UTF-8.
    if (isText && !CHARSET.test(type)) this.setHeader('Content-Type', `${type}; charset=utf-8`);
    const length = isText ? Buffer.byteLength(body) : body.length;
    const coding = codingFor(this, length, options);
    if (coding === 'identity') {
      return isText && !BODILESS.has(this.statusCode)
        ? sendText(this, body, length)
        : send.call(this, body);
    }
    const text = body;
    const done = (error: Error | null, compressed: Buffer) => {
      if (error) return void send.call(this, text);
      this.setHeader('Content-Encoding', coding);
      send.call(this, compressed);
    };
    if (coding === 'br') {
      brotliCompress(
        text,
        {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: options.brotliQuality,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: length,
          },
        },
        done,
      );
    } else {
      gzip(text, { level: options.gzipLevel }, done);
    }
    return this;
  } as Response['send'];
}

// Statuses whose answers have no body, which Express's send strips.
const BODILESS = new Set([204, 205, 304]);

/**
 * Above this many bytes a JSON text is written as bytes: Node joins the header and a text body
 * into one new heap string before writing it, a second copy of the body on the heap that the body
 * budget (items/body-budget.ts) does not count. Measured with the large-pages test (24 clients,
 * pages of 14.4 MB): the heap after a full collection reached 115 MB against the design's 100,
 * and the server was killed at its 128 MB old space in CI. Below it (every small answer: `/v1/me`,
 * the probes, errors, a page of 50) the one string write is the cheaper path.
 */
export const TEXT_WRITE_MAX_BYTES = 64 * 1024;

/**
 * A JSON text answered as Express's send answers it here (ETags off: app.setup.ts; preconditions
 * taken out of every request: conditional-requests.ts, so no 304 of its own), but a small one
 * written as text: Node then writes the header and the body in one string write, where Express
 * first copies a text of 1,000 characters or more into a Buffer, a page's worth of garbage per
 * answer (docs/benchmarks.md, "The fixed cost of a request"). HEAD gets the same headers, no body.
 */
function sendText(response: Response, text: string, length: number): Response {
  response.setHeader('Content-Length', length);
  if (response.req.method === 'HEAD') return response.end();
  if (length > TEXT_WRITE_MAX_BYTES) return response.end(Buffer.from(text, 'utf8'));
  // The head made now, with the length above: `end` on a response without its head measures the
  // text's UTF-8 length once more, about a microsecond a kilobyte for a text that is not all ASCII
  // (20 µs for a page of 22 KB on Node 24), and a page's text seldom is.
  response.writeHead(response.statusCode);
  return response.end(text, 'utf8');
}

function codingFor(
  response: Response,
  length: number,
  { thresholdBytes }: typeof COMPRESSION,
): Coding {
  if (length < thresholdBytes) return 'identity';
  if (response.statusCode === 204 || response.statusCode === 304) return 'identity';
  if (response.getHeader('Content-Encoding') !== undefined) return 'identity';
  if (/(?:^|,)\s*no-transform\s*(?:,|$)/i.test(String(response.getHeader('Cache-Control') ?? ''))) {
    return 'identity';
  }
  return negotiateEncoding(response.req.headers['accept-encoding']);
}
