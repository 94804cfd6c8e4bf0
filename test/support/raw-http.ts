import type { INestApplication } from '@nestjs/common';
import { Agent, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Database } from '../../src/database/database';
import { setServerTimeouts } from '../../src/server/server-timeouts';

/*
 * HTTP without supertest, for what supertest cannot send or would rewrite: a path exactly as
 * written (superagent re-encodes some characters), any method, any bytes on the wire.
 */

/**
 * Starts the application on a loopback port and returns the port, as startServer does: with the
 * server's own timeouts (keep-alive 65 s, headers, request), not Node's defaults (keep-alive 5 s),
 * which the tests' kept-alive agents would otherwise meet and production does not; and with the
 * pools' connections open, so that a burst does not open them on a busy event loop, where the
 * connect timeout ends first (a 503 of the key check that production, which opens them before it
 * listens, does not give).
 */
export async function listenOnLoopback(app: INestApplication): Promise<number> {
  setServerTimeouts(app.getHttpServer() as Server);
  await app.get(Database).openConnections();
  await app.listen(0, '127.0.0.1');
  return ((app.getHttpServer() as Server).address() as AddressInfo).port;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body's bytes as received (compressed ones too). */
  body: Buffer;
}

/** One request through node:http: `path` goes on the request line exactly as given. */
export function send(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string | string[]>; agent?: Agent } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

export interface WireExchange {
  /** Everything the server sent, as latin1 text, until it closed the connection. */
  received: string;
  /** True when the server closed the connection; false when the test gave up waiting. */
  closedByServer: boolean;
}

/**
 * Writes `bytes` on a new connection, then collects what the server answers until it closes the
 * connection, or until `waitMs` of silence (the test then closes it): a hang shows as
 * `closedByServer: false` with nothing received.
 */
export function exchange(
  port: number,
  bytes: string | Buffer,
  options: { waitMs?: number } = {},
): Promise<WireExchange> {
  const waitMs = options.waitMs ?? 2000;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closedByServer = false;
    let timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      clearTimeout(timer);
      timer = setTimeout(() => socket.destroy(), waitMs);
    });
    socket.on('end', () => (closedByServer = true));
    // A reset (the server destroying a connection it refused) is a close by the server too.
    socket.on('error', () => (closedByServer = true));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received: Buffer.concat(chunks).toString('latin1'), closedByServer });
    });
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}

export interface ParsedResponse {
  status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/** The responses in what `exchange` received, one after the other (bodies by Content-Length). */
export function parseResponses(received: string): ParsedResponse[] {
  const responses: ParsedResponse[] = [];
  let rest = received;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`Not an HTTP response: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!status) throw new Error(`Not a status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    responses.push({
      status: Number(status[1]),
      headers,
      body: rest.slice(end + 4, end + 4 + length),
    });
    rest = rest.slice(end + 4 + length);
  }
  return responses;
}
