import { RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { type DestinationStream, destination } from 'pino';
import { Environment } from '../config/environment';
import { loggerOptions } from './log-options';

/** Where log lines are written: standard output; a test overrides it to read them. */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');

/**
 * Structured JSON logs through pino: the request log (pino-http) and, once the app calls
 * `useLogger(app.get(Logger))`, Nest's own messages.
 */
export const LoggingModule = LoggerModule.forRootAsync({
  providers: [
    // Synchronous writes: a line is never lost when the process exits right after it.
    { provide: LOG_DESTINATION, useFactory: () => destination({ dest: 1, sync: true }) },
  ],
  inject: [Environment, LOG_DESTINATION],
  useFactory: (environment: Environment, stream: DestinationStream) => ({
    pinoHttp: [loggerOptions(environment.LOG_LEVEL), stream],
    // Every path, in path-to-regexp 8's syntax (nestjs-pino's default `*` makes Nest 11 warn).
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
  }),
});
