import { Command, Option, SubCommand } from 'nest-commander';
import type { Plan } from '../generated/prisma/enums';
import {
  type WorkspaceChanges,
  type WorkspaceView,
  WorkspacesService,
} from '../workspaces/workspaces.service';
import { AdminCommand, CommandGroup, type JsonFlag } from './admin-command';
import { CliOutput, table, UsageError } from './cli-output';
import * as flags from './flags';

function describe(workspace: WorkspaceView): string {
  const state = workspace.suspended ? ', suspended' : '';
  return `${workspace.id} "${workspace.name}" (${workspace.plan}${state})`;
}

@SubCommand({ name: 'create', description: 'create a workspace' })
export class WorkspaceCreateCommand extends AdminCommand {
  constructor(
    private readonly workspaces: WorkspacesService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { name: string; plan: Plan; id?: string } & JsonFlag) {
    const { json, ...input } = options;
    const workspace = await this.workspaces.create(input);
    this.output.print(json, workspace, () => `Created workspace ${describe(workspace)}.`);
  }

  @Option({ flags: '--name <name>', description: 'workspace name', required: true })
  parseName(value: string): string {
    return flags.text('--name', value);
  }

  @Option({ flags: '--plan <plan>', description: 'growth or starter', required: true })
  parsePlan(value: string): Plan {
    return flags.plan(value);
  }

  @Option({ flags: '--id <id>', description: 'workspace id (generated when absent)' })
  parseId(value: string): string {
    return flags.workspaceId(value);
  }
}

@SubCommand({ name: 'update', description: 'change the name, plan or suspension of a workspace' })
export class WorkspaceUpdateCommand extends AdminCommand {
  constructor(
    private readonly workspaces: WorkspacesService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { id: string } & WorkspaceChanges & JsonFlag) {
    const { id, json, ...changes } = options;
    if (Object.keys(changes).length === 0) {
      throw new UsageError('nothing to update: give --name, --plan or --suspended');
    }
    const workspace = await this.workspaces.update(id, changes);
    this.output.print(json, workspace, () => `Updated workspace ${describe(workspace)}.`);
  }

  @Option({ flags: '--id <id>', description: 'workspace id', required: true })
  parseId(value: string): string {
    return flags.text('--id', value);
  }

  @Option({ flags: '--name <name>', description: 'new name' })
  parseName(value: string): string {
    return flags.text('--name', value);
  }

  @Option({ flags: '--plan <plan>', description: 'growth or starter' })
  parsePlan(value: string): Plan {
    return flags.plan(value);
  }

  @Option({ flags: '--suspended <true|false>', description: 'suspend or reinstate' })
  parseSuspended(value: string): boolean {
    return flags.boolean('--suspended', value);
  }
}

@SubCommand({ name: 'list', description: 'list all workspaces' })
export class WorkspaceListCommand extends AdminCommand {
  constructor(
    private readonly workspaces: WorkspacesService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: JsonFlag) {
    const workspaces = await this.workspaces.list();
    this.output.print(options.json, workspaces, () =>
      table(
        ['ID', 'NAME', 'PLAN', 'SUSPENDED'],
        workspaces.map((w) => [w.id, w.name, w.plan, w.suspended ? 'yes' : 'no']),
        'No workspaces.',
      ),
    );
  }
}

@Command({
  name: 'workspace',
  description: 'create, change and list workspaces',
  subCommands: [WorkspaceCreateCommand, WorkspaceUpdateCommand, WorkspaceListCommand],
  allowUnknownOptions: true,
})
export class WorkspaceCommand extends CommandGroup {}
