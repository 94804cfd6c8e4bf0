import { Inject, Injectable } from '@nestjs/common';

/** Where the admin tool writes: the process's streams, or a test's buffers (see runAdmin). */
export interface AdminIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
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

export function formatDate(date: Date | null): string {
  return date ? date.toISOString() : '-';
}
