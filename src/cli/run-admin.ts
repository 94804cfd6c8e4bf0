import { HttpException, type INestApplicationContext } from '@nestjs/common';
import { CommandFactory } from 'nest-commander';
import {
  isDatabaseUnavailable,
  isMissingDatabase,
  isUndefinedTable,
  missingDatabase,
  notMigrated,
} from '../database/database-errors';
import { AdminProgram } from './admin-program';
import { type AdminIo, UsageError } from './cli-output';
import { CliModule } from './cli.module';

const processIo: AdminIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/**
 * Runs one admin command (`argv` without node and the script, e.g. `['workspace', 'list']`) and
 * resolves to its exit status. The command's result goes to `io.stdout`, any error to `io.stderr`
 * as one line; nothing else is printed (Nest's own logger is off).
 */
export async function runAdmin(argv: string[], io: AdminIo = processIo): Promise<number> {
  let app: INestApplicationContext | undefined;
  try {
    // abortOnError: false, so that a bad configuration is an error here rather than an abort.
    app = await CommandFactory.createWithoutRunning(CliModule.register(io, asksForHelp(argv)), {
      logger: false,
      abortOnError: false,
    });
    await app.get(AdminProgram).run(argv);
    return 0;
  } catch (error) {
    // commander has already printed its own errors (and the help) on io.stderr.
    if (isCommanderExit(error)) return error.exitCode;
    io.stderr(`error: ${describeError(error)}\n`);
    return 1;
  } finally {
    // Closing disconnects Prisma; a failure there says nothing about the command's outcome.
    await app?.close().catch(() => undefined);
  }
}

/** `admin`, `admin help [command]`, `admin ... --help`: commander prints help and runs nothing. */
function asksForHelp(argv: string[]): boolean {
  return argv.length === 0 || argv[0] === 'help' || argv.includes('--help') || argv.includes('-h');
}

function describeError(error: unknown): string {
  if (error instanceof UsageError || error instanceof HttpException) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  // Prisma's messages can span lines (query, arrows); the last non-empty line says what happened.
  const line =
    message
      .split('\n')
      .filter((part) => part.trim() !== '')
      .pop() ?? message;
  // Prisma's words ("The table `public.workspaces` does not exist") do not say what to do.
  if (isUndefinedTable(error)) return notMigrated();
  if (isMissingDatabase(error)) {
    return missingDatabase(process.env.DATABASE_URL ?? '', {
      variable: 'DATABASE_URL',
      source: 'the environment or .env',
    });
  }
  if (isDatabaseUnavailable(error))
    return `the database of DATABASE_URL is unreachable: ${line.trim()}`;
  return line.trim();
}

function isCommanderExit(error: unknown): error is Error & { exitCode: number } {
  const { code, exitCode } = (error ?? {}) as { code?: unknown; exitCode?: unknown };
  return typeof code === 'string' && code.startsWith('commander.') && typeof exitCode === 'number';
}
