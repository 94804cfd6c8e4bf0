import { runAdmin } from '../../src/cli/run-admin';

export interface AdminRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one admin command in-process, as `npm run admin` would, with `env` laid over the
 * environment (undefined removes a variable); the environment is restored afterwards.
 */
export async function runAdminCommand(
  env: Record<string, string | undefined>,
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
    });
    return { status, stdout, stderr };
  } finally {
    process.env = saved;
  }
}
