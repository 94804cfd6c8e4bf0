import { Command, Option } from 'nest-commander';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { type VisitImportCounts, VisitImportService } from '../import/visit-import.service';
import { AdminCommand, type JsonFlag } from './admin-command';
import { CliOutput, UsageError } from './cli-output';
import * as flags from './flags';

@Command({
  name: 'import-visits',
  description:
    'load visits with their page views from NDJSON (a file, or - for standard input), all or nothing',
})
export class ImportVisitsCommand extends AdminCommand {
  constructor(
    private readonly importer: VisitImportService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { workspace: string; file: string } & JsonFlag) {
    const input = await this.input(options.file);
    let counts: VisitImportCounts;
    try {
      counts = await this.importer.import(options.workspace, input);
    } finally {
      // A refused import stops reading at its first bad line: the file's handle is closed here,
      // not by the garbage collector.
      if (options.file !== '-') input.destroy();
    }
    this.output.print(options.json, counts, () => describe(options.workspace, counts));
  }

  @Option({ flags: '--workspace <id>', description: 'workspace id', required: true })
  parseWorkspace(value: string): string {
    return flags.text('--workspace', value);
  }

  @Option({
    flags: '--file <path>',
    description: 'the NDJSON file, one visit per line; - reads standard input',
    required: true,
  })
  parseFile(value: string): string {
    return flags.text('--file', value);
  }

  /** The input, opened before anything is written: a missing file is a usage error. */
  private async input(path: string): Promise<Readable> {
    if (path === '-') return this.output.stdin();
    try {
      const file = await open(path);
      return file.createReadStream();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason =
        code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : 'unreadable';
      throw new UsageError(`--file ${path}: ${reason}`);
    }
  }
}

function describe(workspace: string, { visits, pageViews }: VisitImportCounts): string {
  const visitCount = visits.added + visits.changed + visits.unchanged;
  const pageCount = pageViews.added + pageViews.changed + pageViews.unchanged;
  const removed = pageViews.removed > 0 ? `, ${pageViews.removed} removed` : '';
  return (
    `Imported ${count(visitCount, 'visit', 'visits')} (${visits.added} added, ${visits.changed} ` +
    `changed, ${visits.unchanged} unchanged) and ${count(pageCount, 'page view', 'page views')} ` +
    `(${pageViews.added} added, ${pageViews.changed} changed, ${pageViews.unchanged} unchanged` +
    `${removed}) into workspace ${workspace}.`
  );
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
