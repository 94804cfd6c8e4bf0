import { once } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { until } from '../../../test/support/until';
import { newSigningSecret, signingKeyOf } from '../../webhooks/signing-secret';
import { sendWebhook } from './send-webhook';
import type { SendOptions, WebhookAttempt } from './webhook-attempt';

/*
 * The sender against real receivers on the loopback interface (node:http), each verifying what it
 * receives with the standardwebhooks package. The guard's cases assert both the refusal's reason
 * and that no connection reached the receiver.
 */

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  verified: unknown;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A receiver on `host` (127.0.0.1 unless said), counting connections and verifying each request. */
async function receiver(
  handler: Handler = (_req, res) => res.end('ok'),
  host = '127.0.0.1',
  port = 0,
) {
  const secret = newSigningSecret();
  const received: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified: unknown;
      try {
        verified = new Webhook(secret).verify(body, req.headers as Record<string, string>);
      } catch (error) {
        verified = error;
      }
      received.push({ headers: req.headers, body, verified });
      handler(req, res);
    });
  });
  server.on('connection', () => connections++);
  server.listen(port, host);
  await once(server, 'listening');
  servers.push(server);
  const address = server.address() as AddressInfo;
  return {
    secret,
    received,
    port: address.port,
    url: `http://${host}:${address.port}/hooks?x=1`,
    connections: () => connections,
  };
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

const BODY = JSON.stringify({
  id: 'evt_1',
  type: 'lead.deleted',
  createdAt: '2026-11-23T00:00:00Z',
  data: { id: 'ld_1' },
});

function attempt(
  url: string,
  secrets: string[],
  overrides: Partial<WebhookAttempt> = {},
): WebhookAttempt {
  return {
    url,
    signingKeys: secrets.map(signingKeyOf),
    eventId: 'evt_1',
    body: BODY,
    sentAt: new Date(),
    ...overrides,
  };
}

const LOCAL: SendOptions = { allowPrivateNetworks: true, allowHttp: true };
const GUARDED: SendOptions = { allowPrivateNetworks: false, allowHttp: true };

describe('sendWebhook to a receiver', () => {
  it('delivers a request the standardwebhooks package verifies, with the scheme headers', async () => {
    const target = await receiver((_req, res) => res.writeHead(204).end());
    const outcome = await sendWebhook(attempt(target.url, [target.secret]), LOCAL);

    expect(outcome).toMatchObject({
      delivered: true,
      status: 204,
      gone: false,
      responseExcerpt: '',
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    const [request] = target.received;
    expect(request.verified).toEqual(JSON.parse(BODY));
    expect(request.body).toBe(BODY);
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'evt_1',
      'user-agent': expect.stringMatching(/^visitor-read-api-webhooks\//),
    });
  });

  it('during a rotation is verified by a receiver holding either secret', async () => {
    const target = await receiver();
    const previous = newSigningSecret();
    await sendWebhook(attempt(target.url, [target.secret, previous]), LOCAL);
    const [request] = target.received;
    expect(request.verified).toEqual(JSON.parse(BODY));
    expect(
      new Webhook(previous).verify(request.body, request.headers as Record<string, string>),
    ).toEqual(JSON.parse(BODY));
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  it('keeps webhook-id across attempts; webhook-timestamp is each attempt’s', async () => {
    const target = await receiver((_req, res) => res.writeHead(500).end());
    const first = new Date(Date.now() - 60_000);
    await sendWebhook(attempt(target.url, [target.secret], { sentAt: first }), LOCAL);
    await sendWebhook(attempt(target.url, [target.secret], { sentAt: new Date() }), LOCAL);
    const [a, b] = target.received;
    expect(a.headers['webhook-id']).toBe('evt_1');
    expect(b.headers['webhook-id']).toBe('evt_1');
    expect(
      Number(b.headers['webhook-timestamp']) - Number(a.headers['webhook-timestamp']),
    ).toBeGreaterThanOrEqual(59);
    expect(a.verified).toEqual(JSON.parse(BODY));
    expect(b.verified).toEqual(JSON.parse(BODY));
  });

  it.each([
    [500, {}, { delivered: false, status: 500, gone: false }],
    [410, {}, { delivered: false, status: 410, gone: true }],
    [429, { 'retry-after': '120' }, { delivered: false, status: 429, retryAfterMs: 120_000 }],
    [503, { 'retry-after': '7' }, { delivered: false, status: 503, retryAfterMs: 7_000 }],
    [400, { 'retry-after': '120' }, { delivered: false, status: 400 }],
    [201, {}, { delivered: true, status: 201 }],
  ])('reports a %i answer', async (status, headers, expected) => {
    const target = await receiver((_req, res) => res.writeHead(status, headers).end('why'));
    const outcome = await sendWebhook(attempt(target.url, [target.secret]), LOCAL);
    expect(outcome).toMatchObject({ ...expected, responseExcerpt: 'why' });
    // Retry-After counts only where the spec says: on a 429 or a 503.
    expect('retryAfterMs' in outcome).toBe(status === 429 || status === 503);
  });

  it('reads a Retry-After given as an HTTP date', async () => {
    const at = new Date(Date.now() + 90_000).toUTCString();
    const target = await receiver((_req, res) => res.writeHead(503, { 'retry-after': at }).end());
    const outcome = await sendWebhook(attempt(target.url, [target.secret]), LOCAL);
    expect(outcome.retryAfterMs).toBeGreaterThan(80_000);
    expect(outcome.retryAfterMs).toBeLessThanOrEqual(90_000);
  });

  it('does not follow a redirect: a 302 to an internal address is a failed attempt', async () => {
    const internal = await receiver();
    const redirecting = await receiver((_req, res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${internal.port}/admin` }).end(),
    );
    const outcome = await sendWebhook(attempt(redirecting.url, [redirecting.secret]), LOCAL);
    expect(outcome).toMatchObject({ delivered: false, status: 302, gone: false });
    expect(outcome.error).toMatch(
      /^redirect not followed \(location: http:\/\/127\.0\.0\.1:\d+\/admin\)/,
    );
    expect(redirecting.received).toHaveLength(1);
    expect(internal.connections()).toBe(0);
  });

  it('gives up on a receiver that never answers, at the timeout', async () => {
    const target = await receiver(() => undefined); // reads the request, never responds
    const outcome = await sendWebhook(attempt(target.url, [target.secret]), {
      ...LOCAL,
      timeoutMs: 300,
    });
    expect(outcome).toMatchObject({
      delivered: false,
      gone: false,
      error: 'timed out after 300 ms',
    });
    expect(outcome.status).toBeUndefined();
    expect(target.received).toHaveLength(1);
  });

  it('counts a 2xx that arrived in time even when its body then stalls', async () => {
    const target = await receiver((_req, res) => {
      res.writeHead(200);
      res.write('accepted');
    });
    // Long enough for the status line to arrive on a loaded machine; the body never ends, so the
    // attempt ends at this deadline with what it has.
    const outcome = await sendWebhook(attempt(target.url, [target.secret]), {
      ...LOCAL,
      timeoutMs: 3_000,
    });
    expect(outcome).toMatchObject({ delivered: true, status: 200, responseExcerpt: 'accepted' });
  });

  it('keeps 1 KB of an endless response and stops reading it', async () => {
    let closed = false;
    const target = await receiver((_req, res) => {
      res.writeHead(200);
      const chunk = 'é'.repeat(32 * 1024); // two bytes each: the 1 KB cut falls inside none
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    // A deadline past jest's: only reading stops the attempt, not the timer.
    const outcome = await sendWebhook(attempt(target.url, [target.secret]), {
      ...LOCAL,
      timeoutMs: 120_000,
    });
    expect(outcome).toMatchObject({ delivered: true, status: 200 });
    expect(outcome.error).toBeUndefined();
    expect(Buffer.byteLength(outcome.responseExcerpt)).toBe(1024);
    expect(outcome.responseExcerpt).toBe('é'.repeat(512));
    // The receiver sees its connection closed: the rest is not read.
    await until('the receiver to see its connection closed', () => closed);
  });

  it('connects to the address it resolved and checked, keeping the hostname for Host', async () => {
    const target = await receiver();
    const lookups: string[] = [];
    const lookup = (hostname: string) => {
      lookups.push(hostname);
      return Promise.resolve(['127.0.0.1']);
    };
    // `.invalid` never resolves (RFC 6761): only the pinned address can have been connected to.
    const url = `http://receiver.invalid:${target.port}/hooks`;
    const outcome = await sendWebhook(attempt(url, [target.secret]), { ...LOCAL, lookup });
    expect(outcome).toMatchObject({ delivered: true, status: 200 });
    expect(lookups).toEqual(['receiver.invalid']);
    expect(target.received[0].headers.host).toBe(`receiver.invalid:${target.port}`);
  });

  it('reuses a connection only for the same checked address', async () => {
    const first = await receiver();
    const second = await receiver(undefined, '127.0.0.2', first.port);
    let resolvesTo = '127.0.0.1';
    const lookup = () => Promise.resolve([resolvesTo]);
    const url = `http://rebinding.invalid:${first.port}/hooks`;

    await sendWebhook(attempt(url, [first.secret]), { ...LOCAL, lookup });
    await sendWebhook(attempt(url, [first.secret]), { ...LOCAL, lookup });
    expect(first.received).toHaveLength(2);
    expect(first.connections()).toBe(1); // kept alive

    resolvesTo = '127.0.0.2'; // the name now points elsewhere: a new connection, there
    await sendWebhook(attempt(url, [second.secret]), { ...LOCAL, lookup });
    expect(first.received).toHaveLength(2);
    expect(second.received).toHaveLength(1);
    expect(second.received[0].verified).toEqual(JSON.parse(BODY));
  });

  it('sends https only unless http is allowed, and never a URL with credentials', async () => {
    const target = await receiver();
    const plain = await sendWebhook(attempt(target.url, [target.secret]), {
      allowPrivateNetworks: true,
    });
    expect(plain).toMatchObject({ delivered: false, error: 'refused scheme http:' });
    const withCredentials = `http://user:pass@127.0.0.1:${target.port}/`;
    const credentials = await sendWebhook(attempt(withCredentials, [target.secret]), LOCAL);
    expect(credentials).toMatchObject({ delivered: false, error: 'refused URL with credentials' });
    expect(target.connections()).toBe(0);
  });
});

describe('sendWebhook with the network guard on', () => {
  const hostnameTo =
    (...addresses: string[]) =>
    () =>
      Promise.resolve(addresses);

  it.each([
    [
      '127.0.0.1',
      (port: number) => `http://127.0.0.1:${port}/`,
      undefined,
      /^refused address 127\.0\.0\.1: loopback$/,
    ],
    [
      '[::1]',
      (port: number) => `http://[::1]:${port}/`,
      undefined,
      /^refused address ::1: loopback$/,
    ],
    [
      '10.0.0.1',
      (port: number) => `http://10.0.0.1:${port}/`,
      undefined,
      /^refused address 10\.0\.0\.1: private$/,
    ],
    [
      '169.254.169.254',
      () => 'http://169.254.169.254/latest/meta-data/',
      undefined,
      /^refused address 169\.254\.169\.254: link-local \(cloud metadata\)$/,
    ],
    [
      '[::ffff:127.0.0.1]',
      (port: number) => `http://[::ffff:127.0.0.1]:${port}/`,
      undefined,
      /^refused address ::ffff:7f00:1: IPv4-mapped of 127\.0\.0\.1: loopback$/,
    ],
    [
      '0.0.0.0',
      (port: number) => `http://0.0.0.0:${port}/`,
      undefined,
      /^refused address 0\.0\.0\.0: unspecified/,
    ],
    [
      'a decimal 127.0.0.1',
      (port: number) => `http://2130706433:${port}/`,
      undefined,
      /^refused address 127\.0\.0\.1: loopback$/,
    ],
    [
      'a name resolving to loopback',
      (port: number) => `http://localhost.example:${port}/`,
      hostnameTo('127.0.0.1'),
      /^refused address 127\.0\.0\.1: loopback$/,
    ],
    [
      'a name resolving to a public and a private address',
      (port: number) => `http://mixed.example:${port}/`,
      hostnameTo('93.184.215.14', '127.0.0.1'),
      /^refused address 127\.0\.0\.1: loopback$/,
    ],
  ])('refuses %s, connecting nowhere', async (_case, url, lookup, reason) => {
    const target = await receiver();
    const options = { ...GUARDED, lookup };
    const outcome = await sendWebhook(attempt(url(target.port), [target.secret]), options);
    expect(outcome).toMatchObject({ delivered: false, gone: false, responseExcerpt: '' });
    expect(outcome.status).toBeUndefined();
    expect(outcome.error).toMatch(reason);
    expect(target.connections()).toBe(0);
  });

  it('lets the same loopback names through only when private networks are allowed (tests)', async () => {
    const target = await receiver();
    const lookup = hostnameTo('127.0.0.1');
    const url = `http://localhost.example:${target.port}/`;
    expect(await sendWebhook(attempt(url, [target.secret]), { ...GUARDED, lookup })).toMatchObject({
      delivered: false,
    });
    expect(target.connections()).toBe(0);
    expect(await sendWebhook(attempt(url, [target.secret]), { ...LOCAL, lookup })).toMatchObject({
      delivered: true,
    });
    expect(target.connections()).toBe(1);
  });

  it('reports a failed lookup as a failed attempt', async () => {
    const lookup = () => Promise.reject(new Error('ENOTFOUND'));
    const outcome = await sendWebhook(attempt('https://nowhere.example/', [newSigningSecret()]), {
      ...GUARDED,
      lookup,
    });
    expect(outcome).toMatchObject({
      delivered: false,
      error: 'lookup of nowhere.example failed: ENOTFOUND',
    });
  });
});
