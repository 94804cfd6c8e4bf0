import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { SERVER_TIMEOUTS, setServerTimeouts } from '../../../src/server/server-timeouts';
import { createTestApp, type TestApp } from '../../support/app';
import { createTenant } from '../../support/http';

/*
 * The real application with main.ts's timeouts, but the headers timeout lowered to half a second
 * (and checked every 50 ms) so that a slow client is cut quickly.
 */
const HEADERS_TIMEOUT_MS = 500;
const BYTE_INTERVAL_MS = 50;

let t: TestApp;
let key: string;
let port: number;

beforeAll(async () => {
  t = await createTestApp();
  ({ key } = await createTenant(t.prisma));
  const server = t.app.getHttpServer() as Server;
  setServerTimeouts(server, {
    ...SERVER_TIMEOUTS,
    headersTimeout: HEADERS_TIMEOUT_MS,
    connectionsCheckingInterval: 50,
  });
  await t.app.listen(0, '127.0.0.1');
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});

afterAll(async () => {
  await t?.close();
});

const requestText = (authorization: string) =>
  `GET /v1/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${authorization}\r\n\r\n`;

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends a request on the socket and resolves with the head of the whole response. */
function exchange(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(received)?.[1];
      if (end >= 0 && length && received.length >= end + 4 + Number(length)) {
        socket.off('data', onData);
        resolve(received.slice(0, end));
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`connection closed; received: ${received}`)));
    socket.write(text);
  });
}

/**
 * A client that sends its request one byte every BYTE_INTERVAL_MS until the server answers or
 * closes the connection: what it received, and how much of its request it had sent by then.
 */
function sendByteByByte(socket: Socket, text: string): Promise<{ received: string; sent: number }> {
  return new Promise((resolve) => {
    let received = '';
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < text.length) socket.write(text[sent++]);
    }, BYTE_INTERVAL_MS);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      // An answer, whichever: the exchange is over.
      if (received.includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearInterval(timer);
      resolve({ received, sent });
    });
  });
}

it('a client that sends its headers too slowly gets a 408 and its connection closed', async () => {
  const text = requestText(`Bearer ${key}`);
  // Slower than the timeout by far: the whole request would take seconds.
  expect(text.length * BYTE_INTERVAL_MS).toBeGreaterThan(4 * HEADERS_TIMEOUT_MS);

  const { received, sent } = await sendByteByByte(await open(), text);

  expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  expect(sent).toBeLessThan(text.length);
});

it('an idle kept-alive connection outlives the headers timeout, and says how long it may', async () => {
  const keptAlive = await open();
  try {
    const first = await exchange(keptAlive, requestText(`Bearer ${key}`));
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(first).toMatch(/\r\nKeep-Alive: timeout=65(\r\n|$)/i);

    // Idle while a slow client is cut: longer than the headers timeout, without a sleep.
    const slow = await sendByteByByte(await open(), requestText(`Bearer ${key}`));
    expect(slow.received).toMatch(/^HTTP\/1\.1 408 /);

    const second = await exchange(keptAlive, requestText(`Bearer ${key}`));
    expect(second).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  } finally {
    keptAlive.destroy();
  }
});
