import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import { COMPRESSION, negotiateEncoding } from '../../http/compression';

export const NDJSON = 'application/x-ndjson';

/** Why a stream stopped before its last line: its reader left, or took nothing for too long. */
export class StreamCut extends Error {
  constructor(readonly reason: 'client_gone' | 'stalled') {
    super(`stream cut: ${reason}`);
    this.name = 'StreamCut';
  }
}

/**
 * A response written as newline-delimited JSON, as it is read: compressed (br or gzip, as the
 * request's Accept-Encoding allows, at the levels of the JSON answers) and flushed after each
 * batch of lines, so that the reader has them at once; written no faster than it is read (the
 * next batch waits for the socket to drain, so memory does not grow with a slow reader), and cut
 * when the reader takes nothing for `stallMs`, or has gone.
 */
export class NdjsonWriter {
  private sink: Writable | undefined;
  private flushSink: (() => void) | undefined;
  /** Bytes of NDJSON written (before compression). */
  bytes = 0;
  /** Set when the writer cut the response itself. */
  cutReason: 'stalled' | undefined;

  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
    private readonly stallMs: number,
    /** Told the bytes of each write, as they are written. */
    private readonly written: (bytes: number) => void = () => undefined,
  ) {}

  /** True once the response can no longer be written: the reader left, or it was cut. */
  get closed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  /** Sends the status and headers (200, NDJSON, the coding): the stream has begun. */
  start(): void {
    const { response } = this;
    response.statusCode = 200;
    response.setHeader('Content-Type', NDJSON);
    // Proxies that buffer answers (nginx) pass this one on as it comes.
    response.setHeader('X-Accel-Buffering', 'no');
    const coding = negotiateEncoding(this.request.headers['accept-encoding']);
    if (coding === 'identity' || this.request.method === 'HEAD') {
      this.sink = response;
    } else {
      response.setHeader('Content-Encoding', coding);
      const compressor =
        coding === 'br'
          ? createBrotliCompress({
              params: {
                [constants.BROTLI_PARAM_QUALITY]: COMPRESSION.brotliQuality,
                [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
              },
            })
          : createGzip({ level: COMPRESSION.gzipLevel });
      compressor.pipe(response);
      // A reader gone: the compressor's pending output goes nowhere.
      response.once('close', () => compressor.destroy());
      this.sink = compressor;
      this.flushSink = () =>
        compressor.flush(
          coding === 'br' ? constants.BROTLI_OPERATION_FLUSH : constants.Z_SYNC_FLUSH,
        );
    }
    response.flushHeaders();
  }

  /**
   * Writes `text` (whole lines) and flushes it to the reader; resolves once it may write more (the
   * socket drained), rejects with StreamCut when the reader has gone or stalled.
   */
  async write(text: string): Promise<void> {
    if (this.closed || this.sink === undefined) throw new StreamCut('client_gone');
    if (text.length === 0) return;
    this.count(text);
    const more = this.sink.write(text);
    this.flushSink?.();
    if (!more) await this.drained(this.sink);
  }

  /** Writes the last line and ends the response. */
  end(text: string): void {
    if (this.closed || this.sink === undefined) return;
    this.count(text);
    this.sink.end(text);
  }

  private count(text: string): void {
    const bytes = Buffer.byteLength(text);
    this.bytes += bytes;
    this.written(bytes);
  }

  /** Cuts the response: the reader sees it end without the last line (a truncated stream). */
  cut(): void {
    this.response.destroy();
  }

  private drained(sink: Writable): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (error?: StreamCut) => {
        clearTimeout(timer);
        sink.off('drain', onDrain);
        this.response.off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onDrain = () => done();
      const onClose = () => done(new StreamCut('client_gone'));
      const timer = setTimeout(() => {
        this.cutReason = 'stalled';
        done(new StreamCut('stalled'));
        this.cut();
      }, this.stallMs);
      sink.once('drain', onDrain);
      this.response.once('close', onClose);
    });
  }
}
