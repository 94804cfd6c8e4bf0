import { createHmac } from 'node:crypto';

/**
 * The `webhook-signature` header of the Standard Webhooks v1 scheme: for each key, `v1,` and the
 * base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, space-separated (two during a secret rotation,
 * so that a receiver holding either secret verifies the delivery).
 */
export function webhookSignature(
  keys: Buffer[],
  eventId: string,
  sentAt: Date,
  body: string,
): string {
  if (keys.length === 0) throw new Error('A webhook is signed with at least one key');
  const signed = `${eventId}.${unixSeconds(sentAt)}.${body}`;
  return keys
    .map((key) => `v1,${createHmac('sha256', key).update(signed, 'utf8').digest('base64')}`)
    .join(' ');
}

/** `webhook-timestamp`: whole Unix seconds. */
export function unixSeconds(at: Date): number {
  return Math.floor(at.getTime() / 1000);
}
