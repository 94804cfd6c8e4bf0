import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Company, Lead, Visit } from './types.js';

/**
 * Verifying the service's webhooks, to the Standard Webhooks v1 scheme: `webhook-signature` holds
 * one or more `v1,<base64 HMAC-SHA256>` entries (two while the endpoint's secret is rotated), each
 * over `{webhook-id}.{webhook-timestamp}.{body}` keyed by the bytes of the secret after `whsec_`.
 */

/** One change pushed to an endpoint: the item as the API returns it, or only its id when deleted. */
export type WebhookEvent =
  | { id: string; type: 'company.upserted'; createdAt: string; data: Company }
  | { id: string; type: 'lead.upserted'; createdAt: string; data: Lead }
  | { id: string; type: 'visit.upserted'; createdAt: string; data: Visit }
  | {
      id: string;
      type: 'company.deleted' | 'lead.deleted' | 'visit.deleted';
      createdAt: string;
      data: { id: string };
    };

/** Node's `req.headers`, or a fetch `Headers`. */
export type WebhookHeaders =
  Record<string, string | string[] | undefined> | { get(name: string): string | null };

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, against replays. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The time to compare with; default now. */
  now?: Date;
}

/** The delivery is not verifiably ours: answer 4xx and do not act on it. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/**
 * The event of a delivery whose signature matches one of `secrets` (`whsec_...`; give the old and
 * the new one while you switch after a rotation) and whose timestamp is within the tolerance.
 * `body` must be the raw bytes received, before any JSON parsing. Throws WebhookVerificationError.
 */
export function verifyWebhook(
  secrets: string | string[],
  headers: WebhookHeaders,
  body: string | Buffer,
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'missing webhook-id, webhook-timestamp or webhook-signature',
    );
  }
  const seconds = /^\d+$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!(Math.abs(now - seconds) <= (options.toleranceSeconds ?? 300))) {
    throw new WebhookVerificationError('webhook-timestamp is missing or outside the tolerance');
  }
  const payload = typeof body === 'string' ? body : body.toString('utf8');
  const signed = `${id}.${timestamp}.${payload}`;
  const expected = (Array.isArray(secrets) ? secrets : [secrets]).map((secret) =>
    createHmac('sha256', keyOf(secret)).update(signed, 'utf8').digest(),
  );
  const received = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  const matches = received.some((signature) =>
    expected.some((mac) => mac.length === signature.length && timingSafeEqual(mac, signature)),
  );
  if (!matches) throw new WebhookVerificationError('no signature matches');
  return JSON.parse(payload) as WebhookEvent;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  const value =
    typeof headers.get === 'function'
      ? headers.get(name)
      : (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith('whsec_')) throw new Error('A webhook secret starts with whsec_');
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
}
