import { lookup as dnsLookup } from 'node:dns/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { refusalReason } from './network-guard';
import { webhookSignature, unixSeconds } from './signature';
import type { AttemptOutcome, SendOptions, WebhookAttempt } from './webhook-attempt';

/** Success is a 2xx within this time, lookup, connect and response included (the spec's 15 s). */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** What is kept of a receiver's response, for `webhook deliveries`; the rest is never read. */
export const RESPONSE_EXCERPT_BYTES = 1024;
const USER_AGENT = 'visitor-read-api-webhooks/1.0';

/** A failure before any status: the reason goes to `error`. */
class AttemptError extends Error {}

/**
 * Sends one attempt and says what became of it; it never throws. The host is resolved once, every
 * address is checked by the network guard, and the connection goes to the checked address (no
 * second lookup between check and connect). Redirects are not followed: a 3xx is a failed attempt.
 */
export async function sendWebhook(
  attempt: WebhookAttempt,
  options: SendOptions,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new AttemptError(`timed out after ${timeoutMs} ms`)),
    timeoutMs,
  );
  const failed = (error: string): AttemptOutcome => ({
    delivered: false,
    error,
    gone: false,
    durationMs: Math.round(performance.now() - started),
    responseExcerpt: '',
  });
  try {
    const target = checkedUrl(attempt.url, options);
    const address = await untilAborted(pinnedAddress(target.hostname, options), deadline.signal);
    const response = await request(attempt, target, address, deadline.signal);
    return { ...response, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    if (error instanceof AttemptError) return failed(error.message);
    if (deadline.signal.aborted) return failed((deadline.signal.reason as Error).message);
    return failed(`connection failed: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

interface Target {
  url: URL;
  /** Without the brackets of an IPv6 literal. */
  hostname: string;
}

function checkedUrl(raw: string, options: SendOptions): Target {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AttemptError('invalid URL');
  }
  const allowed = options.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol)) throw new AttemptError(`refused scheme ${url.protocol}`);
  if (url.username || url.password) throw new AttemptError('refused URL with credentials');
  return { url, hostname: url.hostname.replace(/^\[(.*)\]$/, '$1') };
}

/** The one address connected to: the literal, or the first resolved, once all are checked. */
async function pinnedAddress(hostname: string, options: SendOptions): Promise<string> {
  const addresses = isIP(hostname)
    ? [hostname]
    : await (options.lookup ?? systemLookup)(hostname).catch((error: Error) => {
        throw new AttemptError(`lookup of ${hostname} failed: ${error.message}`);
      });
  if (addresses.length === 0) throw new AttemptError(`lookup of ${hostname} found no address`);
  if (!options.allowPrivateNetworks) {
    // Every address, not only the one used: a name that also points inside is refused outright.
    for (const address of addresses) {
      const reason = refusalReason(address);
      if (reason !== null) throw new AttemptError(`refused address ${address}: ${reason}`);
    }
  }
  return addresses[0];
}

async function systemLookup(hostname: string): Promise<string[]> {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

type Response = Omit<AttemptOutcome, 'durationMs'>;

function request(
  attempt: WebhookAttempt,
  target: Target,
  address: string,
  signal: AbortSignal,
): Promise<Response> {
  const { url, hostname } = target;
  const secure = url.protocol === 'https:';
  const body = Buffer.from(attempt.body, 'utf8');
  const requestOptions: https.RequestOptions = {
    method: 'POST',
    protocol: url.protocol,
    hostname, // the Host header and the TLS name stay the URL's, whatever address is connected to
    port: url.port || (secure ? 443 : 80),
    path: url.pathname + url.search,
    agent: agentFor(url, address),
    lookup: pinnedLookup(address),
    signal,
    headers: {
      'content-type': 'application/json',
      'content-length': body.length,
      'user-agent': USER_AGENT,
      'webhook-id': attempt.eventId,
      'webhook-timestamp': String(unixSeconds(attempt.sentAt)),
      'webhook-signature': webhookSignature(
        attempt.signingKeys,
        attempt.eventId,
        attempt.sentAt,
        attempt.body,
      ),
    },
  };
  if (secure && !isIP(hostname)) requestOptions.servername = hostname;

  return new Promise<Response>((resolve, reject) => {
    // Set once the status has arrived: from then on, an error (the deadline) only ends the body.
    let finishBody: (() => void) | undefined;
    const req = (secure ? https : http).request(requestOptions, (res) => {
      const status = res.statusCode ?? 0;
      const decoder = new StringDecoder('utf8');
      let excerpt = '';
      let kept = 0;
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        resolve(outcomeOf(status, res.headers, excerpt + decoder.end()));
      };
      finishBody = finish;
      res.on('data', (chunk: Buffer) => {
        const room = RESPONSE_EXCERPT_BYTES - kept;
        excerpt += decoder.write(chunk.subarray(0, room));
        kept += Math.min(room, chunk.length);
        // Enough kept: the rest is not read (a receiver could answer with a gigabyte).
        if (chunk.length > room) {
          res.destroy();
          finish();
        }
      });
      res.on('end', finish);
      // The status arrived in time; a body cut by the deadline or the receiver does not change it.
      res.on('error', finish);
      res.on('close', finish);
    });
    req.on('error', (error) => (finishBody ? finishBody() : reject(error)));
    req.end(body);
  });
}

function outcomeOf(status: number, headers: http.IncomingHttpHeaders, excerpt: string): Response {
  const outcome: Response = {
    delivered: status >= 200 && status < 300,
    status,
    gone: status === 410,
    responseExcerpt: excerpt,
  };
  if (status >= 300 && status < 400) {
    outcome.error = `redirect not followed (location: ${(headers.location ?? '').slice(0, 200)})`;
  }
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(headers['retry-after']);
    if (retryAfterMs !== undefined) outcome.retryAfterMs = retryAfterMs;
  }
  return outcome;
}

/** `Retry-After` as seconds or as an HTTP date, in milliseconds from now; undefined if neither. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Node's own lookup replaced by the checked address, in both of its calling forms. */
function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * Keep-alive agents, one per origin AND pinned address: a pooled socket is reused only for the
 * address that was checked, so a name that later resolves elsewhere gets a new, checked connection.
 */
const agents = new Map<string, http.Agent>();
const MAX_AGENTS = 1000;

function agentFor(url: URL, address: string): http.Agent {
  const key = `${url.origin} ${address}`;
  let agent = agents.get(key);
  if (agent === undefined) {
    const Agent = url.protocol === 'https:' ? https.Agent : http.Agent;
    // Idle sockets are closed after 30 s (before most receivers' own keep-alive timeouts end).
    // Measured (one process sending to a local node:http receiver, 4,000 attempts of a 1.6 KB
    // body, 2 cores at load 8): 1,100 to 3,700 attempts/s kept alive at 8 to 32 at once, against
    // 800 to 1,000 with a connection per attempt; the spec's target is 500 events/s.
    // At most 50 connections to one receiver address: a backlog queues here, not on the receiver.
    agent = new Agent({ keepAlive: true, maxSockets: 50, timeout: 30_000 });
    if (agents.size >= MAX_AGENTS) {
      const [oldestKey, oldest] = agents.entries().next().value as [string, http.Agent];
      oldest.destroy();
      agents.delete(oldestKey);
    }
    agents.set(key, agent);
  }
  return agent;
}
