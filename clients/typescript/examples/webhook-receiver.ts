/*
 * A webhook receiver: verifies each delivery by the Standard Webhooks v1 algorithm, then answers
 * 204 at once (process after answering: more than 15 s is a failed attempt, retried).
 *
 *   WEBHOOK_SECRET=whsec_... PORT=8080 node dist/examples/webhook-receiver.js
 *
 * Deduplicate on `webhook-id` (delivery is at least once); an upsert carries the item's current
 * state, so events may be applied in any order.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';

/** The event if a signature matches and the timestamp is within 5 minutes, else null. */
export function verifyWebhook(
  secret: string,
  headers: IncomingHttpHeaders,
  body: string,
  nowMs = Date.now(),
): unknown {
  const header = (name: string) => String(headers[name] ?? '');
  const [id, timestamp] = [header('webhook-id'), header('webhook-timestamp')];
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > 300) return null; // a replay, or a wrong clock
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  const match = header('webhook-signature')
    .split(' ')
    .some((s) => {
      const given = Buffer.from(s.startsWith('v1,') ? s.slice(3) : '', 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  return match ? (JSON.parse(body) as unknown) : null;
}

if (require.main === module) {
  createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const event = verifyWebhook(process.env.WEBHOOK_SECRET ?? '', request.headers, body);
      response.writeHead(event ? 204 : 401).end();
      if (event) console.log('received', event);
    });
  }).listen(Number(process.env.PORT ?? 8080));
}
