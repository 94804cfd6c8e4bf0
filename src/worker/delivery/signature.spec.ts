import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { newSigningSecret, signingKeyOf } from '../../webhooks/signing-secret';
import { webhookSignature } from './signature';

/*
 * Our signatures checked by an independent implementation of the scheme: the `standardwebhooks`
 * package, as a receiver would use it.
 */
const BODY = '{"id":"evt_1","type":"company.upserted","data":{"id":"co_1","name":"Ünïcödé"}}';

function headersFor(secrets: string[], eventId: string, sentAt: Date, body = BODY) {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': webhookSignature(secrets.map(signingKeyOf), eventId, sentAt, body),
  };
}

describe('webhookSignature', () => {
  it('is verified by the standardwebhooks package with the one secret', () => {
    const secret = newSigningSecret();
    const headers = headersFor([secret], 'evt_1', new Date());
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
  });

  it('during a rotation carries both signatures, and a receiver holding either verifies', () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const headers = headersFor([current, previous], 'evt_2', new Date());
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    }
    expect(() => new Webhook(newSigningSecret()).verify(BODY, headers)).toThrow(
      WebhookVerificationError,
    );
  });

  it('does not verify a changed body, id or timestamp', () => {
    const secret = newSigningSecret();
    const sentAt = new Date();
    const headers = headersFor([secret], 'evt_3', sentAt);
    const receiver = new Webhook(secret);
    expect(() => receiver.verify(BODY.replace('co_1', 'co_2'), headers)).toThrow(
      WebhookVerificationError,
    );
    expect(() => receiver.verify(BODY, { ...headers, 'webhook-id': 'evt_4' })).toThrow(
      WebhookVerificationError,
    );
    const later = String(Math.floor(sentAt.getTime() / 1000) + 1);
    expect(() => receiver.verify(BODY, { ...headers, 'webhook-timestamp': later })).toThrow(
      WebhookVerificationError,
    );
  });

  it('refuses to sign without a key', () => {
    expect(() => webhookSignature([], 'evt_1', new Date(), BODY)).toThrow(/at least one key/);
  });
});

describe('signing secrets', () => {
  it('are whsec_ and base64 of 32 random bytes, each new one different', () => {
    const secrets = Array.from({ length: 50 }, newSigningSecret);
    expect(new Set(secrets).size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(signingKeyOf(secret)).toHaveLength(32);
    }
  });

  it.each([
    ['no prefix', 'c2VjcmV0LW9mLXR3ZW50eS1mb3VyLWJ5dGVzLi4u'],
    ['too short', 'whsec_' + Buffer.alloc(16, 1).toString('base64')],
    ['not base64', 'whsec_' + '!'.repeat(40)],
  ])('refuses a secret with %s', (_case, secret) => {
    expect(() => signingKeyOf(secret)).toThrow(/whsec_/);
  });
});
