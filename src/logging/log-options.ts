import { type LevelWithSilent, type LoggerOptions, stdTimeFunctions } from 'pino';
import { redactApiKeys } from './key-redaction';

/** The root logger's options: JSON lines, ISO times, and no secret in any line. */
export function loggerOptions(level: LevelWithSilent): LoggerOptions {
  return {
    level,
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Headers are never logged (see requestLine); this covers an object logged by hand.
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization'],
      censor: '[REDACTED]',
    },
    // Whatever a line holds (a message, an error's stack, a path, a request id), in whatever
    // encoding, key-shaped values do not reach the output (key-redaction.ts).
    hooks: { streamWrite: redactApiKeys },
  };
}
