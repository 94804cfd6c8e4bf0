import { Inject, Injectable, type LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

/** The root pino logger of the application (see LoggingModule). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's messages (`new Logger(context)` anywhere, once `app.useLogger(app.get(AppLogger))`) as
 * pino lines with their `context`, like the request log.
 */
@Injectable()
export class AppLogger implements LoggerService {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  log(message: unknown, ...context: unknown[]): void {
    this.write('info', message, context);
  }

  error(message: unknown, ...context: unknown[]): void {
    this.write('error', message, context);
  }

  warn(message: unknown, ...context: unknown[]): void {
    this.write('warn', message, context);
  }

  debug(message: unknown, ...context: unknown[]): void {
    this.write('debug', message, context);
  }

  verbose(message: unknown, ...context: unknown[]): void {
    this.write('trace', message, context);
  }

  fatal(message: unknown, ...context: unknown[]): void {
    this.write('fatal', message, context);
  }

  // Nest passes the context last, after an optional stack for errors.
  private write(level: Level, message: unknown, params: unknown[]): void {
    const context = params.length > 0 ? params[params.length - 1] : undefined;
    const stack = params.length > 1 ? params[0] : undefined;
    const fields = { context, ...(typeof stack === 'string' && { stack }) };
    if (message instanceof Error) this.logger[level]({ ...fields, err: message });
    else if (typeof message === 'string') this.logger[level](fields, message);
    else this.logger[level]({ ...fields, value: message });
  }
}
