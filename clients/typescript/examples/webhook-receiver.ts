/*
 * A webhook receiver: verify the delivery, act on each event once, then answer 2xx.
 *   WEBHOOK_SECRET=whsec_... PORT=3001 node dist/examples/webhook-receiver.js
 */
import { createServer } from 'node:http';
import { verifyWebhook, type WebhookEvent } from '../src/index.js';

export function webhookReceiver(secrets: string[], handle: (event: WebhookEvent) => Promise<void>) {
  const handled = new Set<string>(); // webhook-id: in a real receiver, a unique key in its database
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let event: WebhookEvent;
      try {
        event = verifyWebhook(secrets, req.headers, Buffer.concat(chunks)); // the raw body
      } catch {
        return void res.writeHead(400).end();
      }
      if (handled.has(event.id)) return void res.writeHead(204).end(); // a retry of a done event
      handle(event).then(
        () => {
          handled.add(event.id);
          res.writeHead(204).end();
        },
        () => res.writeHead(500).end(), // not done: the service retries it
      );
    });
  });
}

if (require.main === module) {
  // WEBHOOK_SECRET: the endpoint's secret; during a rotation, the new and the old, space-separated.
  const secrets = (process.env.WEBHOOK_SECRET ?? '').split(' ');
  const handle = (event: WebhookEvent) => {
    console.log(event.type, event.data.id); // your work: resolve once it is durably done
    return Promise.resolve();
  };
  webhookReceiver(secrets, handle).listen(Number(process.env.PORT ?? 3001));
}
