import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import { StartupError } from '../common/startup-error';
import {
  addListeningSockets,
  bindsWithReusePort,
  checkPortFree,
  LISTENING_SOCKETS,
  listenOptions,
} from './listening-sockets';

/**
 * `app.listen(port)` on several sockets (listening-sockets.ts), with a refusal to bind said in
 * words that name the variable to change, not as Node's bare `listen EADDRINUSE: address already
 * in use :::3000`. Used by the server and the quick start (`npm run demo`).
 */
export async function listen(app: INestApplication, port: number): Promise<void> {
  try {
    if (bindsWithReusePort() && port !== 0) await checkPortFree(port);
    // Nest hands its argument to the HTTP server's `listen`, which takes the options object too.
    await app.listen(listenOptions(port) as unknown as number);
    await addListeningSockets(app.getHttpServer() as Server, LISTENING_SOCKETS - 1);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'EADDRINUSE') {
      throw new StartupError(
        `port ${port} is already in use: set PORT to a free port (e.g. PORT=${port < 65535 ? port + 1 : 3000})`,
      );
    }
    if (code === 'EACCES') {
      throw new StartupError(
        `port ${port} needs privileges this process does not have: set PORT to a port above 1023`,
      );
    }
    throw error;
  }
}
