import { randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
/** The spec asks for at least 24 random bytes; 32 matches the HMAC-SHA256 block's strength. */
const SECRET_BYTES = 32;

/** A new signing secret, shown to the operator once: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret: the decoded bytes after `whsec_` (the Standard Webhooks convention). */
export function signingKeyOf(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error('A webhook signing secret starts with whsec_');
  const encoded = secret.slice(PREFIX.length);
  // Buffer.from(..., 'base64') skips what is not base64; a secret must round-trip exactly.
  const key = Buffer.from(encoded, 'base64');
  if (key.length < 24 || key.toString('base64') !== encoded) {
    throw new Error('A webhook signing secret is whsec_ followed by base64 of at least 24 bytes');
  }
  return key;
}
