import { Readable } from 'node:stream';
import { runAdmin } from '../../src/cli/run-admin';
import type { TestApp } from './app';

export interface AdminRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one admin command in-process, as `npm run admin` would, with `env` laid over the
 * environment (undefined removes a variable); the environment is restored afterwards.
 */
export function runAdminCommand(
  env: Record<string, string | undefined>,
  ...argv: string[]
): Promise<AdminRun> {
  return runAdminCommandWithInput(env, undefined, ...argv);
}

/**
 * runAdminCommand with `input` as the command's standard input (`--file -`): bytes, in chunks
 * that end mid-line, as a pipe delivers them.
 */
export async function runAdminCommandWithInput(
  env: Record<string, string | undefined>,
  input: string | Buffer | undefined,
  ...argv: string[]
): Promise<AdminRun> {
  const saved = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  let stdout = '';
  let stderr = '';
  try {
    const status = await runAdmin(argv, {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      ...(input === undefined ? {} : { stdin: () => Readable.from(chunks(Buffer.from(input))) }),
    });
    return { status, stdout, stderr };
  } finally {
    process.env = saved;
  }
}

const STDIN_CHUNK_BYTES = 100;

function chunks(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += STDIN_CHUNK_BYTES) {
    parts.push(bytes.subarray(at, at + STDIN_CHUNK_BYTES));
  }
  return parts;
}

/**
 * The admin tool on a test app's database: `cli` runs a command as is; `cliJson` runs it with
 * `--json` and expects success with exactly one JSON document on stdout (JSON.parse refuses more).
 */
export function adminOn(app: () => TestApp) {
  const cli = (...argv: string[]) => runAdminCommand({ DATABASE_URL: app().database.url }, ...argv);
  const cliJson = async (...argv: string[]): Promise<unknown> => {
    const run = await cli(...argv, '--json');
    expect(run).toMatchObject({ status: 0, stderr: '' });
    return JSON.parse(run.stdout) as unknown;
  };
  return { cli, cliJson };
}

/** A refusal: non-zero, nothing on stdout, one line on stderr. */
export function expectRefusal(run: AdminRun, message: string | RegExp): void {
  expect(run).toMatchObject({ stdout: '' });
  expect(run.status).not.toBe(0);
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
}
