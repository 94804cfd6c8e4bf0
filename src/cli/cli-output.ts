import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';

/** Where the admin tool writes: the process's streams, or a test's buffers (see runAdmin). */
export interface AdminIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** What `--file -` reads: the process's standard input, or a test's stream. */
  stdin?: () => Readable;
}

export const ADMIN_IO = Symbol('AdminIo');

/** A mistake in the command line itself (a missing, empty or invalid flag). */
export class UsageError extends Error {}

/** The commands' only way to print their result: one JSON document, or a short text. */
@Injectable()
export class CliOutput {
  constructor(@Inject(ADMIN_IO) private readonly io: AdminIo) {}

  print(json: boolean | undefined, value: unknown, text: () => string): void {
    this.io.stdout(`${json ? JSON.stringify(value, null, 2) : text()}\n`);
  }

  /** The standard input, for a command given `--file -`. */
  stdin(): Readable {
    return this.io.stdin?.() ?? process.stdin;
  }
}

/** Rows as aligned columns under a header; `empty` when there are none. */
export function table(headers: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return empty;
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => row[i].length)),
  );
  return [headers, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * Text for one table cell: every run of white space and control characters (line breaks, tabs)
 * as one space, cut to `width` characters with an ellipsis.
 */
export function oneLine(text: string, width: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  const characters = [...flat];
  return characters.length <= width ? flat : `${characters.slice(0, width - 1).join('')}…`;
}

export function formatDate(date: Date | null): string {
  return date ? date.toISOString() : '-';
}
