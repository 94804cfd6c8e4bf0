import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keptDemoSecret } from './demo-secret';

describe('keptDemoSecret', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'demo-secret-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a secret on the first run and gives the same one on every later run', () => {
    const file = join(dir, '.data', 'demo-api-key-secret');
    const first = keptDemoSecret(file);
    expect(first.made).toBe(true);
    expect(first.secret.length).toBeGreaterThanOrEqual(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(keptDemoSecret(file)).toEqual({ secret: first.secret, made: false });
  });

  it('replaces a file that holds no usable secret', () => {
    const file = join(dir, 'demo-api-key-secret');
    writeFileSync(file, 'short\n');
    expect(keptDemoSecret(file).made).toBe(true);
  });
});
