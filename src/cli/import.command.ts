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
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'unreadable';
    throw new UsageError(`--file ${path}: ${reason}`);
  }
  // Not readFile's 'utf8', which replaces each invalid sequence with U+FFFD: the text imported
  // would then differ from the file's without a word.
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`--file ${path} is not valid UTF-8: ${whereUtf8Breaks(bytes)}`);
  }
  try {
    return JSON.parse(content) as unknown;
  } catch (error) {
    throw new UsageError(`--file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Where the first invalid UTF-8 sequence of `bytes` starts: a byte, its line and place in it. */
function whereUtf8Breaks(bytes: Buffer): string {
  // Whether the first `length` bytes decode: completely, or so far (a character cut at the end
  // being not yet wrong).
  const decodes = (length: number, soFar: boolean) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, length), {
        stream: soFar,
      });
      return true;
    } catch {
      return false;
    }
  };
  // True so far up to the first wrong byte, false from it on: bisection.
  let low = 0;
  let high = bytes.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (decodes(middle, true)) low = middle;
    else high = middle - 1;
  }
  // The sequence that goes wrong starts after the last complete character.
  while (low > 0 && !decodes(low, false)) low--;
  const line = bytes.subarray(0, low).filter((byte) => byte === 0x0a).length + 1;
  const column = low - (low === 0 ? 0 : bytes.lastIndexOf(0x0a, low - 1) + 1) + 1;
  const byte = bytes[low].toString(16).padStart(2, '0');
  return `byte ${low + 1} (line ${line}, byte ${column} of the line), 0x${byte}, is not UTF-8`;
}
