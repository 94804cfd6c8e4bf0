import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The API_KEY_SECRET of a demo on your own DATABASE_URL when none is set: made on the first run
 * and kept in `file` (only its owner reads it), so that the keys a run made on that database still
 * work on the next (keys are stored as HMACs under the secret: a new one would make them 401).
 */
export function keptDemoSecret(file: string): { secret: string; made: boolean } {
  try {
    const secret = readFileSync(file, 'utf8').trim();
    if (secret.length >= 32) return { secret, made: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return { secret, made: true };
}
