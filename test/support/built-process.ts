import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BuiltProcess {
  process: ChildProcess;
  /** What it wrote, stdout and stderr together, as it came. */
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * A program of the build (`script` under dist/, e.g. `main.js`; `npm test` builds first), run as
 * the image runs it: in production, with its own environment only (no .env in the temporary
 * folder, nothing of this shell's but PATH), plus the run's database, its pooler setting (the URL
 * may lead to PgBouncer: a server started without it sends startup settings PgBouncer refuses)
 * and the key secret. `env` adds to that or overrides it (undefined removes); `nodeFlags` go
 * before the script; `cwd` is the system's temporary folder unless given.
 */
export function spawnBuilt(
  script: string,
  options: {
    databaseUrl: string | undefined;
    env?: Record<string, string | undefined>;
    nodeFlags?: string[];
    cwd?: string;
    /** In a process group of its own, to be signalled as a terminal's Ctrl-C does: the group. */
    ownProcessGroup?: boolean;
  },
): BuiltProcess {
  const path = join(__dirname, '..', '..', 'dist', script);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first.`);
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), path], {
    cwd: options.cwd ?? tmpdir(),
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      DATABASE_URL: options.databaseUrl,
      DATABASE_POOLER: process.env.DATABASE_POOLER,
      API_KEY_SECRET: process.env.API_KEY_SECRET,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownProcessGroup,
  });
  const output: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { process: child, output, exited };
}
