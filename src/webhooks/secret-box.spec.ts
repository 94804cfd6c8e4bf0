import { randomBytes } from 'node:crypto';
import { openSecret, sealSecret } from './secret-box';

describe('sealSecret / openSecret', () => {
  const key = randomBytes(32);
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

  it('round-trips, and the stored text does not contain the secret', () => {
    const sealed = sealSecret(key, 'whe_1', secret);
    expect(sealed).not.toContain(secret);
    expect(sealed).not.toContain(secret.slice('whsec_'.length, 20));
    expect(openSecret(key, 'whe_1', sealed)).toBe(secret);
    // A fresh nonce each time: the same secret never gives the same text.
    expect(sealSecret(key, 'whe_1', secret)).not.toBe(sealed);
  });

  it('refuses another key, another endpoint, and altered bytes', () => {
    const sealed = sealSecret(key, 'whe_1', secret);
    expect(() => openSecret(randomBytes(32), 'whe_1', sealed)).toThrow();
    expect(() => openSecret(key, 'whe_2', sealed)).toThrow();
    const bytes = Buffer.from(sealed.slice(3), 'base64');
    bytes[bytes.length - 1] ^= 1;
    expect(() => openSecret(key, 'whe_1', `v1.${bytes.toString('base64')}`)).toThrow();
  });
});
