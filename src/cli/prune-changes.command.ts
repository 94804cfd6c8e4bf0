import { Command, Option } from 'nest-commander';
import { Environment } from '../config/environment';
import { ChangePruningService } from '../deletion/change-pruning.service';
import { AdminCommand, type JsonFlag } from './admin-command';
import { CliOutput, formatDate } from './cli-output';
import * as flags from './flags';

@Command({
  name: 'prune-changes',
  description:
    'remove the change feeds’ deletion records older than the retention (run it daily); ' +
    'cursors before them then get 410',
})
export class PruneChangesCommand extends AdminCommand {
  constructor(
    private readonly pruning: ChangePruningService,
    private readonly environment: Environment,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { olderThanDays?: number } & JsonFlag) {
    const days = options.olderThanDays ?? this.environment.CHANGES_RETENTION_DAYS;
    const result = await this.pruning.prune(days);
    const { pruned, deletedWorkspaces: gone } = result;
    this.output.print(
      options.json,
      result,
      () =>
        `Pruned ${pruned.companies} company, ${pruned.leads} lead and ${pruned.visits} visit ` +
        `deletion records older than ${days} days (before ${formatDate(result.before)}); removed ` +
        `${gone.companies} company, ${gone.leads} lead and ${gone.visits} visit change records ` +
        `and ${gone.horizons} horizons of deleted workspaces.`,
    );
  }

  @Option({
    flags: '--older-than-days <n>',
    description: 'retention in days (default: CHANGES_RETENTION_DAYS, itself 30 by default)',
  })
  parseOlderThanDays(value: string): number {
    return flags.days('--older-than-days', value);
  }
}
