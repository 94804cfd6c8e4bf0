import type { LevelWithSilent, LoggerOptions } from 'pino';
import { redactApiKeys } from './key-redaction';

/** The root logger's options: JSON lines, ISO times, and no secret in any line. */
export function loggerOptions(level: LevelWithSilent): LoggerOptions {
  return {
    level,
    timestamp: isoTimeOncePerMillisecond(),
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

/**
 * pino's `isoTime` (`,"time":"2026-11-28T21:15:00.123Z"`), the text made once per millisecond
 * rather than once per line: a `Date` and its `toISOString` were 2.7 % of the CPU of a request to
 * `/health/live` (`node --cpu-prof`, Node 24, the shipped flags), where at 15,000 lines a second
 * about fifteen lines share each millisecond.
 */
export function isoTimeOncePerMillisecond(): () => string {
  let millisecond = Number.NaN;
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== millisecond) {
      millisecond = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}
