import { destination } from 'pino';

/** Lines are written once this many bytes wait (about 14 request lines). */
export const LOG_BUFFER_BYTES = 4096;
/** And at least this often, so that a quiet process's lines are not held back for long. */
export const LOG_FLUSH_INTERVAL_MS = 100;

type Destination = ReturnType<typeof destination>;

let stdout: Destination | undefined;

/**
 * Where every log line of the process goes, the start logger's, the application's and the
 * worker's: standard output, one buffer for the whole process (there is one fd 1), so that lines
 * keep their order whoever writes them.
 *
 * Written in blocks rather than a system call per line: a line waits until LOG_BUFFER_BYTES are
 * held or LOG_FLUSH_INTERVAL_MS has passed, then goes out with the others in one synchronous
 * `write` (a request's line alone was one `write` per request: docs/benchmarks.md, "The fixed
 * cost of a request"). Whatever is held is written at exit, which every ending but a kill runs:
 * the graceful shutdown's process.exit, a failed start's, an uncaught error. A SIGKILL (or the
 * kernel's OOM killer) loses what is held then: at most LOG_BUFFER_BYTES of lines, written in the
 * last LOG_FLUSH_INTERVAL_MS (measured in test/built/logging.e2e-spec.ts).
 */
export function stdoutLog(): Destination {
  if (stdout === undefined) {
    const stream = destination({ dest: 1, sync: true, minLength: LOG_BUFFER_BYTES });
    setInterval(() => stream.flush(), LOG_FLUSH_INTERVAL_MS).unref();
    process.once('exit', () => {
      try {
        stream.flushSync();
      } catch {
        // Standard output is gone (a closed pipe): there is nowhere left to write.
      }
    });
    stdout = stream;
  }
  return stdout;
}
