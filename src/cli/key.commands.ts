import { Command, Option, SubCommand } from 'nest-commander';
import { ApiKeyAdminService } from '../workspaces/api-key-admin.service';
import { AdminCommand, CommandGroup, type JsonFlag } from './admin-command';
import { CliOutput, formatDate, table } from './cli-output';
import * as flags from './flags';

@SubCommand({ name: 'create', description: 'create an API key; its value is shown this once' })
export class KeyCreateCommand extends AdminCommand {
  constructor(
    private readonly keys: ApiKeyAdminService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { workspace: string; name: string } & JsonFlag) {
    const created = await this.keys.create(options.workspace, options.name);
    const { id, name, workspaceId, prefix, createdAt, key } = created;
    this.output.print(
      options.json,
      { id, name, workspaceId, prefix, createdAt, key },
      () =>
        `Created key ${id} "${name}" for workspace ${workspaceId}.\n` +
        `Key (shown this once, store it now): ${key}`,
    );
  }

  @Option({ flags: '--workspace <id>', description: 'workspace id', required: true })
  parseWorkspace(value: string): string {
    return flags.text('--workspace', value);
  }

  @Option({ flags: '--name <name>', description: 'what the key is for', required: true })
  parseName(value: string): string {
    return flags.text('--name', value);
  }
}

@SubCommand({ name: 'list', description: 'list the keys of a workspace (never their value)' })
export class KeyListCommand extends AdminCommand {
  constructor(
    private readonly keys: ApiKeyAdminService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { workspace: string } & JsonFlag) {
    const keys = await this.keys.list(options.workspace);
    // Field by field: whatever the service returns, nothing but these reaches the screen.
    const shown = keys.map(({ id, name, prefix, createdAt, lastUsedAt, revokedAt }) => ({
      id,
      name,
      prefix,
      createdAt,
      lastUsedAt,
      revokedAt,
    }));
    this.output.print(options.json, shown, () =>
      table(
        ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'],
        shown.map((k) => [
          k.id,
          k.name,
          k.prefix,
          formatDate(k.createdAt),
          formatDate(k.lastUsedAt),
          formatDate(k.revokedAt),
        ]),
        `No keys in workspace ${options.workspace}.`,
      ),
    );
  }

  @Option({ flags: '--workspace <id>', description: 'workspace id', required: true })
  parseWorkspace(value: string): string {
    return flags.text('--workspace', value);
  }
}

@SubCommand({ name: 'revoke', description: 'revoke a key; refused from the next request on' })
export class KeyRevokeCommand extends AdminCommand {
  constructor(
    private readonly keys: ApiKeyAdminService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { id: string } & JsonFlag) {
    const revoked = await this.keys.revoke(options.id);
    this.output.print(
      options.json,
      revoked,
      () => `Revoked key ${revoked.id} at ${formatDate(revoked.revokedAt)}.`,
    );
  }

  @Option({ flags: '--id <keyId>', description: 'key id (see key list)', required: true })
  parseId(value: string): string {
    return flags.text('--id', value);
  }
}

@Command({
  name: 'key',
  description: 'create, list and revoke API keys',
  subCommands: [KeyCreateCommand, KeyListCommand, KeyRevokeCommand],
  allowUnknownOptions: true,
})
export class KeyCommand extends CommandGroup {}
