import { type Level, type Logger, pino } from 'pino';
import { StartupError } from '../common/startup-error';
import { AppLogger } from './app-logger';
import { loggerOptions } from './log-options';
import { stdoutLog } from './stdout-log';

const LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/**
 * The server's logger while the application is being created, until startServer hands over to
 * the LoggingModule's, and for the last line of a start that fails: JSON lines through pino from
 * the very first one, like every later line, instead of Nest's coloured text and stacks.
 */
export class StartLogger extends AppLogger {
  constructor(private readonly root: Logger) {
    super(root);
  }

  override error(message: unknown, ...context: unknown[]): void {
    // Nest's ExceptionHandler logs the error that NestFactory.create then rethrows (abortOnError
    // is off): server/serve.ts reports it once, through failed().
    if (context[context.length - 1] === 'ExceptionHandler') return;
    super.error(message, ...context);
  }

  /**
   * The line of a failed start, at `fatal`: the message alone when it says what to do (a bad
   * variable, a busy port, a database to migrate), with the error and its stack otherwise.
   */
  failed(error: unknown): void {
    if (error instanceof StartupError) this.root.fatal(error.message);
    else if (error instanceof Error) this.root.fatal({ err: error }, error.message);
    else this.root.fatal({ value: error }, 'The server could not start');
  }
}

/**
 * At LOG_LEVEL as the environment gives it (a value that is not a level is reported by the
 * configuration's check; meanwhile `info`). `silent` still lets the fatal line through: a start
 * that fails must say why.
 */
export function createStartLogger(level = process.env.LOG_LEVEL): StartLogger {
  const chosen = (
    level && LEVELS.includes(level) ? level : level === 'silent' ? 'fatal' : 'info'
  ) as Level;
  // The process's one standard output (its last line is written at exit, after a failed start).
  return new StartLogger(pino(loggerOptions(chosen), stdoutLog()));
}
