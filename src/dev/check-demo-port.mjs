// The quick start's first step (`npm run demo`), before the build, the embedded database and the
// seed: is the port the demo will listen on free? A second demo on a taken port then says so at
// once. Plain JavaScript, run from the checkout as is: nothing is built yet. The demo's own
// listen() (src/server/listen.ts) says the same if the port is taken in between.
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';

if (existsSync('.env')) process.loadEnvFile('.env');
const port = Number(process.env.PORT ?? 3000);

if (Number.isInteger(port) && port > 0 && port < 65536) {
  const probe = createServer();
  probe.once('error', (error) => {
    if (error.code !== 'EADDRINUSE') return; // Anything else is for the demo to report.
    console.error(
      `port ${port} is already in use: set PORT to a free port (e.g. PORT=${port < 65535 ? port + 1 : 3000})`,
    );
    process.exitCode = 1;
  });
  // The address the server listens on (every interface, as app.listen(port) does).
  probe.listen(port, () => probe.close());
}
