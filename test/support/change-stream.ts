import { request, type IncomingHttpHeaders } from 'node:http';

/** A line of a change stream, parsed. */
export type StreamLine = Record<string, unknown>;

export interface StreamRead {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every line received whole, parsed (an error body is one line too). */
  lines: StreamLine[];
  /** True when the response came whole (whether or not with its last line): not cut. */
  ended: boolean;
  /** Bytes of the body received. */
  bytes: number;
}

export interface StreamReadOptions {
  headers?: Record<string, string>;
  /** Closes the connection once this many lines have come (a client that leaves or is cut). */
  cutAfterLines?: number;
  /** Called with each line as it comes; may return a promise that holds the reading meanwhile. */
  onLine?: (line: StreamLine, index: number) => void | Promise<void>;
  /**
   * Reads nothing of the body until this settles: the socket is not read either, so that the
   * server's writes fill the kernel's buffers, which stay small for a reader that never read.
   */
  hold?: Promise<void>;
}

/** GETs `path` with the key and reads its NDJSON lines as they come, whole lines only. */
export function readStream(
  port: number,
  path: string,
  key: string,
  options: StreamReadOptions = {},
): Promise<StreamRead> {
  return new Promise((resolve, reject) => {
    const lines: StreamLine[] = [];
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        headers: { Authorization: `Bearer ${key}`, ...options.headers },
      },
      (response) => {
        let pending = '';
        let bytes = 0;
        let cut = false;
        let settled = false;
        let holding: Promise<void> = Promise.resolve();
        const settle = (ended: boolean) => {
          if (settled) return;
          settled = true;
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            lines,
            ended,
            bytes,
          });
        };
        // An end of the stream waits for the lines being held; a cut does not.
        const done = (ended: boolean) => void holding.then(() => settle(ended));
        const hold = (until: Promise<void>) => {
          response.pause();
          response.socket.pause();
          holding = holding
            .then(() => until)
            .then(() => {
              response.socket.resume();
              response.resume();
            });
        };
        if (options.hold) hold(options.hold);
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (cut) return;
          bytes += Buffer.byteLength(chunk);
          pending += chunk;
          let at: number;
          while (!cut && (at = pending.indexOf('\n')) !== -1) {
            const line = JSON.parse(pending.slice(0, at)) as StreamLine;
            pending = pending.slice(at + 1);
            lines.push(line);
            const held = options.onLine?.(line, lines.length - 1);
            if (held) hold(held);
            if (lines.length === options.cutAfterLines) {
              cut = true;
              outgoing.destroy();
              settle(false);
            }
          }
        });
        response.on('end', () => {
          if (cut) return;
          // An error envelope is one JSON body without a newline.
          if (pending.trim() !== '') lines.push(JSON.parse(pending) as StreamLine);
          // Complete only when the message was: a connection closed mid-body ends it too.
          done(response.complete);
        });
        // The server closed the connection before the end: settled at once, held lines or not.
        response.on('error', () => settle(false));
        response.on('aborted', () => settle(false));
        response.on('close', () => {
          if (!response.complete) settle(false);
        });
      },
    );
    outgoing.on('error', (error) => {
      if (!outgoing.destroyed || lines.length === 0) reject(error);
    });
    outgoing.end();
  });
}

/** The stream's changes (its lines with `op`), its checkpoints and its last line, if it has one. */
export function partsOf(lines: StreamLine[]): {
  changes: StreamLine[];
  checkpoints: string[];
  last: { cursor: string; hasMore: boolean } | undefined;
} {
  const changes = lines.filter((line) => 'op' in line);
  const checkpoints = lines
    .filter((line) => 'cursor' in line && !('hasMore' in line))
    .map((line) => line.cursor as string);
  const final = lines.at(-1);
  const last =
    final !== undefined && 'hasMore' in final
      ? { cursor: final.cursor as string, hasMore: final.hasMore as boolean }
      : undefined;
  return { changes, checkpoints, last };
}
