import type { Readable } from 'node:stream';

/** One line of an NDJSON input: its number (from 1) and its text, or why it cannot be read. */
export type NdjsonLine =
  | { number: number; text: string; problem?: undefined }
  | { number: number; text?: undefined; problem: string };

/**
 * The longest line read: a visit with 500 page views at every field's bound weighs about 2 MB
 * of JSON (more with escapes). A longer line is reported, not held: memory stays bounded by this
 * whatever the input.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * The lines of a stream of UTF-8 text, as they arrive: one at a time in memory, never the whole
 * input. Blank lines (white space only) are skipped but counted. A line that is not valid UTF-8
 * is reported rather than decoded with replacement characters, which would import text different
 * from the file's without a word.
 */
export async function* ndjsonLines(input: Readable): AsyncGenerator<NdjsonLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let parts: Buffer[] = [];
  let length = 0;
  let tooLong = false;
  let number = 0;

  const line = (): NdjsonLine | null => {
    number++;
    const bytes = parts.length === 1 ? parts[0] : Buffer.concat(parts, length);
    const wasTooLong = tooLong;
    parts = [];
    length = 0;
    tooLong = false;
    if (wasTooLong) return { number, problem: `longer than ${MAX_LINE_BYTES} bytes` };
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      return { number, problem: 'not valid UTF-8' };
    }
    return text.trim() === '' ? null : { number, text };
  };

  for await (const read of input as AsyncIterable<Buffer | string>) {
    // A stream of text (Readable.from of strings) gives strings; files and stdin, bytes.
    const chunk = typeof read === 'string' ? Buffer.from(read, 'utf8') : read;
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      keep(chunk.subarray(start, end));
      const read = line();
      if (read !== null) yield read;
      start = end + 1;
    }
    keep(chunk.subarray(start));
  }
  if (length > 0 || tooLong) {
    const read = line();
    if (read !== null) yield read;
  }

  function keep(bytes: Buffer): void {
    if (tooLong || bytes.length === 0) return;
    if (length + bytes.length > MAX_LINE_BYTES) {
      parts = [];
      length = 0;
      tooLong = true;
      return;
    }
    // A copy: the chunk's memory is the stream's, reused once the loop moves on.
    parts.push(Buffer.from(bytes));
    length += bytes.length;
  }
}
