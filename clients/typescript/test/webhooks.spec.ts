import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { webhookReceiver } from '../examples/webhook-receiver';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from '../src';
import { newSigningSecret, signingKeyOf } from '../../../src/webhooks/signing-secret';
import { sendWebhook } from '../../../src/worker/delivery/send-webhook';

/*
 * The client's verifyWebhook and its receiver example, against deliveries signed by an
 * independent implementation of the scheme (the standardwebhooks package) and by the service's
 * own sender.
 */
const EVENT = {
  id: 'evt_01',
  type: 'company.deleted',
  createdAt: '2026-11-23T04:00:00.000Z',
  data: { id: 'co_1' },
};
const BODY = JSON.stringify(EVENT);

/** Headers as standardwebhooks signs them, for one or more secrets (as during a rotation). */
function signedBy(secrets: string[], at = new Date(), id = EVENT.id, body = BODY) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}

describe('verifyWebhook', () => {
  it('returns the event of a delivery standardwebhooks signed', () => {
    const secret = newSigningSecret();
    expect(verifyWebhook(secret, signedBy([secret]), BODY)).toEqual(EVENT);
    expect(verifyWebhook([secret], signedBy([secret]), Buffer.from(BODY))).toEqual(EVENT);
  });

  it('accepts fetch Headers', () => {
    const secret = newSigningSecret();
    expect(verifyWebhook(secret, new Headers(signedBy([secret])), BODY)).toEqual(EVENT);
  });

  it('during a rotation: two signatures, either secret verifies', () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const headers = signedBy([current, previous]);
    expect(verifyWebhook(current, headers, BODY)).toEqual(EVENT);
    expect(verifyWebhook(previous, headers, BODY)).toEqual(EVENT);
    // A receiver that holds both while it switches verifies a delivery signed by either alone.
    expect(verifyWebhook([current, previous], signedBy([previous]), BODY)).toEqual(EVENT);
  });

  it.each([
    ['another secret', () => ({ headers: signedBy([newSigningSecret()]) })],
    ['a changed body', () => ({ body: BODY.replace('co_1', 'co_2') })],
    [
      'another webhook-id',
      (s: string) => ({ headers: { ...signedBy([s]), 'webhook-id': 'evt_02' } }),
    ],
    [
      'no signature header',
      (s: string) => ({ headers: { ...signedBy([s]), 'webhook-signature': '' } }),
    ],
    [
      'a v2 entry only',
      (s: string) => ({
        headers: {
          ...signedBy([s]),
          'webhook-signature': signedBy([s])['webhook-signature'].replace('v1,', 'v2,'),
        },
      }),
    ],
    [
      'a timestamp 6 minutes old',
      (s: string) => ({ headers: signedBy([s], new Date(Date.now() - 360_000)) }),
    ],
    [
      'a timestamp 6 minutes ahead',
      (s: string) => ({ headers: signedBy([s], new Date(Date.now() + 360_000)) }),
    ],
  ])('refuses %s', (_case, change: (secret: string) => { headers?: object; body?: string }) => {
    const secret = newSigningSecret();
    const { headers = signedBy([secret]), body = BODY } = change(secret);
    expect(() => verifyWebhook(secret, headers as Record<string, string>, body)).toThrow(
      WebhookVerificationError,
    );
  });

  it('takes the tolerance it is given', () => {
    const secret = newSigningSecret();
    const headers = signedBy([secret], new Date(Date.now() - 600_000));
    expect(verifyWebhook(secret, headers, BODY, { toleranceSeconds: 900 })).toEqual(EVENT);
    expect(() => verifyWebhook(secret, headers, BODY, { toleranceSeconds: 300 })).toThrow(
      /tolerance/,
    );
  });
});

describe('the receiver example', () => {
  let server: Server;
  let url: string;
  const handled: WebhookEvent[] = [];
  let failNext = false;
  const secret = newSigningSecret();

  beforeAll(async () => {
    server = webhookReceiver([secret], (event) => {
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('CRM down'));
      }
      handled.push(event);
      return Promise.resolve();
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => (handled.length = 0));

  /** A delivery of the event `id` (its body's id is its webhook-id, as the service sends it). */
  const post = (secrets: string[], id = EVENT.id) => {
    const body = JSON.stringify({ ...EVENT, id });
    const headers = {
      ...signedBy(secrets, new Date(), id, body),
      'content-type': 'application/json',
    };
    return fetch(url, { method: 'POST', headers, body });
  };

  it('acts once on a delivery and on its retries, and refuses a forged one', async () => {
    expect((await post([secret])).status).toBe(204);
    expect((await post([secret])).status).toBe(204); // a retry: same webhook-id
    expect(handled).toEqual([EVENT]);
    expect((await post([newSigningSecret()], 'evt_02')).status).toBe(400);
    expect(handled).toHaveLength(1);
  });

  it('answers 500 when it could not act, and acts on the retry', async () => {
    failNext = true;
    expect((await post([secret], 'evt_03')).status).toBe(500);
    expect(handled).toHaveLength(0);
    expect((await post([secret], 'evt_03')).status).toBe(204);
    expect(handled).toEqual([{ ...EVENT, id: 'evt_03' }]);
  });

  it('verifies what the service sends', async () => {
    const event = { ...EVENT, id: 'evt_04' };
    const outcome = await sendWebhook(
      {
        url,
        signingKeys: [signingKeyOf(secret)],
        eventId: event.id,
        body: JSON.stringify(event),
        sentAt: new Date(),
      },
      { allowPrivateNetworks: true, allowHttp: true },
    );
    expect(outcome).toMatchObject({ delivered: true, status: 204 });
    expect(handled).toEqual([event]);
  });
});
