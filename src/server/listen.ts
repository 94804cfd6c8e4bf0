import type { INestApplication } from '@nestjs/common';
import { StartupError } from '../common/startup-error';

/**
 * `app.listen(port)`, with a refusal to bind said in words that name the variable to change, not
 * as Node's bare `listen EADDRINUSE: address already in use :::3000`. Used by the server and the
 * quick start (`npm run demo`).
 */
export async function listen(app: INestApplication, port: number): Promise<void> {
  try {
    await app.listen(port);
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
