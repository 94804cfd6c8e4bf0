import { Command, Option } from 'nest-commander';
import { type DeletionCounts, DeletionService } from '../deletion/deletion.service';
import { AdminCommand, type JsonFlag } from './admin-command';
import { CliOutput, UsageError } from './cli-output';
import * as flags from './flags';

@Command({
  name: 'delete',
  description:
    'delete companies (with their contacts, leads and visits), leads and visits of a workspace, all or nothing',
})
export class DeleteCommand extends AdminCommand {
  constructor(
    private readonly deletion: DeletionService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(
    _args: string[],
    options: {
      workspace: string;
      companies?: string[];
      leads?: string[];
      visits?: string[];
    } & JsonFlag,
  ) {
    const { workspace, companies = [], leads = [], visits = [] } = options;
    if (companies.length === 0 && leads.length === 0 && visits.length === 0) {
      throw new UsageError('nothing to delete: give --companies, --leads, --visits or several');
    }
    const counts = await this.deletion.delete(workspace, { companies, leads, visits });
    this.output.print(options.json, counts, () => describe(counts));
  }

  @Option({ flags: '--workspace <id>', description: 'workspace id', required: true })
  parseWorkspace(value: string): string {
    return flags.text('--workspace', value);
  }

  @Option({
    flags: '--companies <ids>',
    description: 'company ids, comma-separated; their contacts, leads and visits go with them',
  })
  parseCompanies(value: string, previous?: string[]): string[] {
    return flags.idList('--companies', value, previous);
  }

  @Option({ flags: '--leads <ids>', description: 'lead ids, comma-separated' })
  parseLeads(value: string, previous?: string[]): string[] {
    return flags.idList('--leads', value, previous);
  }

  @Option({
    flags: '--visits <ids>',
    description: 'visit ids, comma-separated; their page views go with them',
  })
  parseVisits(value: string, previous?: string[]): string[] {
    return flags.idList('--visits', value, previous);
  }
}

function describe(counts: DeletionCounts): string {
  const { companies, contacts, leads, visits } = counts;
  const parts: string[] = [];
  if (companies > 0) {
    parts.push(
      `${count(companies, 'company', 'companies')} (with ${count(contacts, 'contact', 'contacts')}, ` +
        `${count(leads.ofDeletedCompanies, 'lead', 'leads')} and ` +
        `${count(visits.ofDeletedCompanies, 'visit', 'visits')})`,
    );
  }
  if (leads.listed > 0) parts.push(count(leads.listed, 'listed lead', 'listed leads'));
  if (visits.listed > 0) parts.push(count(visits.listed, 'listed visit', 'listed visits'));
  return (
    `Deleted ${parts.join(' and ')} from workspace ${counts.workspaceId}: ` +
    `${count(leads.total, 'lead', 'leads')} and ${count(visits.total, 'visit', 'visits')} in all.`
  );
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
