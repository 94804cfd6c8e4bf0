import { Global, Module } from '@nestjs/common';
import { type DestinationStream, pino } from 'pino';
import { Environment } from '../config/environment';
import { AppLogger, ROOT_LOGGER } from './app-logger';
import { loggerOptions } from './log-options';
import { stdoutLog } from './stdout-log';

/** Where log lines are written: standard output; a test overrides it to read them. */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');

/**
 * Structured JSON logs through pino: the request log and, once the app calls
 * `useLogger(app.get(AppLogger))`, Nest's own messages.
 *
 * Not nestjs-pino: its middleware runs every request inside an AsyncLocalStorage, which on Node 20
 * turns on promise hooks for every promise of the process; measured, that cost ~10-20% of the
 * throughput of a request (docs/benchmarks.md, "The fixed cost of a request"). The one line that
 * needs the request's id, the error filter's, carries it as a field (requestIdOf).
 */
@Global()
@Module({
  providers: [
    { provide: LOG_DESTINATION, useFactory: stdoutLog },
    {
      provide: ROOT_LOGGER,
      inject: [Environment, LOG_DESTINATION],
      useFactory: (environment: Environment, stream: DestinationStream) =>
        pino(loggerOptions(environment.LOG_LEVEL), stream),
    },
    AppLogger,
  ],
  exports: [AppLogger, ROOT_LOGGER],
})
export class LoggingModule {}
