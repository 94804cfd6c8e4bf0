import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import {
  addListeningSockets,
  bindsWithReusePort,
  checkPortFree,
  LISTENING_SOCKETS,
  listenOptions,
} from './listening-sockets';
import { until } from '../../test/support/until';

// Where sockets cannot share a port (Node before 22.12), the server listens on one, as before:
// these tests are skipped there, and their names say why.
function whereSharedPorts(name: string, fn: jest.ProvidesCallback, timeout?: number): void {
  if (bindsWithReusePort()) it(name, fn, timeout);
  else {
    const reason = `SO_REUSEPORT needs Node 22.12 or 23.1, this is ${process.version}`;
    it.skip(`${name} (skipped: ${reason})`, fn, timeout);
  }
}

async function listening(): Promise<{ server: Server; port: number }> {
  const server = createServer((_request, response) => response.end('ok'));
  await new Promise<void>((resolve) => server.listen(listenOptions(0), resolve));
  await addListeningSockets(server, LISTENING_SOCKETS - 1);
  return { server, port: (server.address() as AddressInfo).port };
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('listening sockets', () => {
  it('binds with SO_REUSEPORT from Node 22.12 and 23.1 on', () => {
    expect(bindsWithReusePort('20.19.0')).toBe(false);
    expect(bindsWithReusePort('22.11.0')).toBe(false);
    expect(bindsWithReusePort('22.12.0')).toBe(true);
    expect(bindsWithReusePort('23.0.0')).toBe(false);
    expect(bindsWithReusePort('23.1.0')).toBe(true);
    expect(bindsWithReusePort('24.0.0')).toBe(true);
  });

  whereSharedPorts(
    'accepts a burst of connections several a turn of the event loop, not one',
    async () => {
      const { server, port } = await listening();
      const burst = 64;
      // Turns of the event loop, each held 2 ms, as a busy server's are: libuv accepts one
      // connection per listening socket per turn, so one socket would take 64 turns.
      let turns = 0;
      let accepted = 0;
      let turnsToAcceptAll: number | undefined;
      server.on('connection', () => {
        if (++accepted === burst) turnsToAcceptAll = turns;
      });
      const spin = () => {
        turns++;
        const spinUntil = performance.now() + 2;
        while (performance.now() < spinUntil);
        if (turnsToAcceptAll === undefined) setImmediate(spin);
      };
      setImmediate(spin);
      const sockets = await Promise.all(Array.from({ length: burst }, () => connected(port)));
      await until('every connection of the burst accepted', () => turnsToAcceptAll !== undefined, {
        everyMs: 1,
      });
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));

      expect(turnsToAcceptAll).toBeLessThan(burst / 2);
    },
  );

  whereSharedPorts(
    'closes every socket with the server, and calls back once each connection has ended',
    async () => {
      const { server, port } = await listening();
      // Enough connections that some come through the other sockets.
      const sockets = await Promise.all(Array.from({ length: 32 }, () => connected(port)));
      let closed = false;
      server.close(() => (closed = true));
      // Not accepting on any socket any more.
      await expect(connected(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      expect(closed).toBe(false);
      for (const socket of sockets) socket.destroy();
      // The server sees the connections end in a later turn: a bounded wait, not a fixed one.
      await until('the close callback', () => closed);
    },
  );

  whereSharedPorts(
    'finds the port taken by another server that shares it, as a second instance would',
    async () => {
      const { server, port } = await listening();
      await expect(checkPortFree(port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      await new Promise((resolve) => server.close(resolve));
      await expect(checkPortFree(port)).resolves.toBeUndefined();
    },
  );
});
