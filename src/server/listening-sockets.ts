import type { Server } from 'node:http';
import { createServer, type Server as NetServer } from 'node:net';

/*
 * Why more than one listening socket: libuv accepts one connection per listening socket per turn
 * of the event loop (since libuv 1.45, "unix: don't accept() connections in a loop"), and a turn
 * of this server under a burst takes 10 to 100 ms: every socket that became readable meanwhile is
 * served in it, hundreds of them. A burst that opens connections then waits in the kernel's accept
 * queue at one connection a turn, and so does any client that connects behind it: measured with
 * the noisy-neighbour workload (docs/benchmarks.md, "The tail under a burst"), a quiet
 * workspace's request on a new connection waited 0.3 to 2.5 s to be accepted while its answer
 * took 10 to 60 ms, behind the 44 to 300 connections each wave opened.
 *
 * The port is bound by LISTENING_SOCKETS sockets (SO_REUSEPORT, same process: the kernel spreads
 * new connections among them), each handing its connections to the one HTTP server: a turn
 * accepts up to that many. 16: a wave of 300 new connections is accepted in about 20 turns, not
 * 300; 64 measured no better on this machine.
 */
export const LISTENING_SOCKETS = 16;

/** Node 22.12+ and 23.1+ bind with SO_REUSEPORT (`reusePort`); older ones ignore the option. */
export function bindsWithReusePort(version: string = process.versions.node): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/**
 * Binds the port without sharing it, then lets it go: rejects as `listen` does (EADDRINUSE) when
 * anything holds it, another instance of this server included. Sockets that share a port would
 * bind beside that instance instead of refusing to.
 */
export function checkPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ port }, () => probe.close(() => resolve()));
  });
}

/** The options of the server's own `listen`: the port, shared with the other sockets when they can. */
export function listenOptions(port: number): { port: number; reusePort?: boolean } {
  return bindsWithReusePort() ? { port, reusePort: true } : { port };
}

/**
 * Binds `count` more sockets to the port the server listens on (with `listenOptions`), whose
 * connections the server serves as its own, and makes `server.close()` close them too: it stops
 * accepting on every socket at once and calls back once every connection has ended, as it did with
 * one. Nothing is added where sockets cannot share the port.
 */
export async function addListeningSockets(server: Server, count: number): Promise<void> {
  const address = server.address();
  if (!bindsWithReusePort() || count <= 0 || address === null || typeof address === 'string') {
    return;
  }
  const others: NetServer[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const other = createServer((socket) => server.emit('connection', socket));
      others.push(other);
      await new Promise<void>((resolve, reject) => {
        other.once('error', reject);
        other.listen({ port: address.port, host: address.address, reusePort: true }, () => {
          other.off('error', reject);
          resolve();
        });
      });
    }
  } catch (error) {
    for (const other of others) other.close();
    throw error;
  }
  const closeServer = server.close.bind(server);
  // The server's connections from the other sockets count in those sockets' servers (net.Server
  // counts what it accepted), so its close calls back once all of them have closed too.
  server.close = (callback?: (error?: Error) => void): Server => {
    let open = others.length + 1;
    let failed: Error | undefined;
    const closed = (error?: Error) => {
      failed ??= error;
      if (--open === 0) callback?.(failed);
    };
    for (const other of others) other.close(closed);
    return closeServer(closed);
  };
}
