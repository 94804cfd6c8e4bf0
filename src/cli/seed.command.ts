import { Command, Option } from 'nest-commander';
import { DemoSeedService } from '../import/demo-seed.service';
import { AdminCommand, type JsonFlag } from './admin-command';
import { CliOutput } from './cli-output';

@Command({
  name: 'seed',
  description: 'create or refresh the demo workspace with realistic data and a new key',
})
export class SeedCommand extends AdminCommand {
  constructor(
    private readonly seeder: DemoSeedService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: JsonFlag) {
    const { workspace, key, counts, visits } = await this.seeder.seed();
    const visitCount = visits.visits.added + visits.visits.changed + visits.visits.unchanged;
    const pageCount =
      visits.pageViews.added + visits.pageViews.changed + visits.pageViews.unchanged;
    this.output.print(
      options.json,
      { workspace, key },
      () =>
        `Seeded workspace ${workspace.id} "${workspace.name}" (${workspace.plan}) with ` +
        `${counts.companies} companies, ${counts.contacts} contacts, ${counts.leads} leads and ` +
        `${visitCount} visits (${pageCount} page views).\n` +
        `Key "Demo key" (shown this once): ${key}`,
    );
  }

  // The only data set there is; required so that a bare `seed` does nothing by surprise.
  @Option({ flags: '--demo', description: 'the demo data set', required: true })
  parseDemo(): boolean {
    return true;
  }
}
