import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '../../..');

describe('the TypeScript client types (clients/typescript/src/schema.ts)', () => {
  it('are what openapi-typescript generates from docs/openapi.json (else: npm run client:generate)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'client-schema-'));
    try {
      const generated = join(dir, 'schema.ts');
      // The CLI in a child process: openapi-typescript is ESM, which jest's CommonJS cannot load.
      const cli = join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
      execFileSync(process.execPath, [cli, 'docs/openapi.json', '-o', generated], {
        cwd: root,
        stdio: 'pipe',
      });
      const committed = readFileSync(join(root, 'clients/typescript/src/schema.ts'), 'utf8');
      expect(committed).toBe(readFileSync(generated, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
