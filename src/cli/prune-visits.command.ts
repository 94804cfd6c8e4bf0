import { Command, Option } from 'nest-commander';
import { Environment } from '../config/environment';
import { VisitPruningService } from '../deletion/visit-pruning.service';
import { AdminCommand, type JsonFlag } from './admin-command';
import { CliOutput, formatDate } from './cli-output';
import * as flags from './flags';

@Command({
  name: 'prune-visits',
  description:
    'drop the months of visits wholly older than the retention, and make the months ahead (run it daily)',
})
export class PruneVisitsCommand extends AdminCommand {
  constructor(
    private readonly pruning: VisitPruningService,
    private readonly environment: Environment,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { olderThanDays?: number } & JsonFlag) {
    const days = options.olderThanDays ?? this.environment.VISIT_RETENTION_DAYS;
    const result = await this.pruning.prune(days);
    const { dropped, made } = result;
    const months = (n: number) => `${n} ${n === 1 ? 'month' : 'months'}`;
    this.output.print(
      options.json,
      result,
      () =>
        `Dropped ${months(dropped.length)} of visits older than ${days} days (before ` +
        `${formatDate(result.before)})${dropped.length > 0 ? `: ${dropped.join(', ')}` : ''}; ` +
        `made ${months(made)}.`,
    );
  }

  @Option({
    flags: '--older-than-days <n>',
    description: 'retention in days (default: VISIT_RETENTION_DAYS, itself 395 by default)',
  })
  parseOlderThanDays(value: string): number {
    return flags.days('--older-than-days', value);
  }
}
