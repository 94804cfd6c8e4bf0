import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// AES-256-GCM: a 96-bit random nonce per encryption (the size GCM is built for) and the full
// 128-bit tag. A stored value is `v1.` + base64(nonce | tag | ciphertext).
const VERSION = 'v1.';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Signing secrets at rest: encrypted under WEBHOOK_SECRET_KEY, so a database dump alone gives
 * none away. The endpoint id is the additional authenticated data: a ciphertext copied onto
 * another endpoint's row does not decrypt there.
 */
export function sealSecret(key: Buffer, endpointId: string, secret: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(endpointId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return VERSION + Buffer.concat([nonce, cipher.getAuthTag(), ciphertext]).toString('base64');
}

/** The secret sealed for this endpoint; throws when the key, the endpoint or the bytes differ. */
export function openSecret(key: Buffer, endpointId: string, sealed: string): string {
  if (!sealed.startsWith(VERSION)) throw new Error('not a sealed webhook secret');
  const bytes = Buffer.from(sealed.slice(VERSION.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES));
  decipher.setAAD(Buffer.from(endpointId, 'utf8'));
  decipher.setAuthTag(bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
  const plain = Buffer.concat([
    decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)),
    decipher.final(),
  ]);
  return plain.toString('utf8');
}
