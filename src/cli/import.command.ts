import { Command, Option } from 'nest-commander';
import { readFile } from 'node:fs/promises';
import { ImportService } from '../import/import.service';
import { AdminCommand, type JsonFlag } from './admin-command';
import { CliOutput, UsageError } from './cli-output';
import * as flags from './flags';

@Command({
  name: 'import',
  description: 'load companies (with contacts) and leads from a JSON file, all or nothing',
})
export class ImportCommand extends AdminCommand {
  constructor(
    private readonly importer: ImportService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { workspace: string; file: string } & JsonFlag) {
    const counts = await this.importer.import(options.workspace, await readJson(options.file));
    this.output.print(
      options.json,
      counts,
      () =>
        `Imported ${count(counts.companies, 'company', 'companies')}, ` +
        `${count(counts.contacts, 'contact', 'contacts')} and ${count(counts.leads, 'lead', 'leads')} ` +
        `into workspace ${options.workspace}.`,
    );
  }

  @Option({ flags: '--workspace <id>', description: 'workspace id', required: true })
  parseWorkspace(value: string): string {
    return flags.text('--workspace', value);
  }

  @Option({ flags: '--file <path>', description: 'the JSON file', required: true })
  parseFile(value: string): string {
    return flags.text('--file', value);
  }
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

async function readJson(path: string): Promise<unknown> {
  let content: string;
  try {
    content = await readFile(path, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'unreadable';
    throw new UsageError(`--file ${path}: ${reason}`);
  }
  try {
    return JSON.parse(content) as unknown;
  } catch (error) {
    throw new UsageError(`--file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}
