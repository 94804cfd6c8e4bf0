import { Command, Option, SubCommand } from 'nest-commander';
import { type Scope, SCOPES } from '../auth/scopes';
import { Clock } from '../common/clock';
import { ApiKeyAdminService, MAX_ROLL_OVERLAP_MS } from '../workspaces/api-key-admin.service';
import { AdminCommand, CommandGroup, type JsonFlag } from './admin-command';
import { CliOutput, formatDate, table, UsageError } from './cli-output';
import * as flags from './flags';

/**
 * A key's scopes as the tool shows them, table and JSON alike: `all` for a key without restriction
 * (stored as no scope: it also reads what a later scope would cover), else the list.
 */
function shownScopes(scopes: string[]): string[] | 'all' {
  return scopes.length === 0 ? 'all' : scopes;
}

@SubCommand({ name: 'create', description: 'create an API key; its value is shown this once' })
export class KeyCreateCommand extends AdminCommand {
  constructor(
    private readonly keys: ApiKeyAdminService,
    private readonly clock: Clock,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(
    _args: string[],
    options: {
      workspace: string;
      name: string;
      expiresIn?: number;
      expiresAt?: Date;
      scopes?: Scope[];
    } & JsonFlag,
  ) {
    if (options.expiresIn !== undefined && options.expiresAt !== undefined) {
      throw new UsageError('give --expires-in or --expires-at, not both');
    }
    const expiresAt =
      options.expiresAt ??
      (options.expiresIn === undefined ? null : new Date(this.clock.now() + options.expiresIn));
    const created = await this.keys.create(
      options.workspace,
      options.name,
      expiresAt,
      options.scopes ?? [],
    );
    const { id, name, workspaceId, prefix, createdAt, scopes, key } = created;
    this.output.print(
      options.json,
      {
        id,
        name,
        workspaceId,
        prefix,
        createdAt,
        expiresAt: created.expiresAt,
        scopes: shownScopes(scopes),
        key,
      },
      () =>
        `Created key ${id} "${name}" for workspace ${workspaceId}` +
        `${created.expiresAt ? `, expiring at ${formatDate(created.expiresAt)}` : ''}.\n` +
        `Key (shown this once, store it now): ${key}`,
    );
  }

  @Option({
    flags: '--expires-in <duration>',
    description: 'refused after this long: a whole number with s, m, h or d (90d)',
  })
  parseExpiresIn(value: string): number {
    return flags.duration('--expires-in', value);
  }

  @Option({ flags: '--expires-at <date-time>', description: 'refused from this ISO 8601 instant' })
  parseExpiresAt(value: string): Date {
    return flags.dateTime('--expires-at', value);
  }

  @Option({
    flags: '--scopes <list>',
    description: `what it may read, comma-separated: ${SCOPES.join(',')} (default: all)`,
  })
  parseScopes(value: string): Scope[] {
    return flags.scopes('--scopes', value);
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
    const shown = keys.map(
      ({ id, name, prefix, createdAt, lastUsedAt, revokedAt, expiresAt, rolledAt, scopes }) => ({
        id,
        name,
        prefix,
        createdAt,
        lastUsedAt,
        revokedAt,
        expiresAt,
        rolledAt,
        scopes: shownScopes(scopes),
      }),
    );
    this.output.print(options.json, shown, () =>
      table(
        ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED', 'EXPIRES', 'ROLLED', 'SCOPES'],
        shown.map((k) => [
          k.id,
          k.name,
          k.prefix,
          formatDate(k.createdAt),
          formatDate(k.lastUsedAt),
          formatDate(k.revokedAt),
          formatDate(k.expiresAt),
          formatDate(k.rolledAt),
          k.scopes === 'all' ? k.scopes : k.scopes.join(','),
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

const DEFAULT_OVERLAP_MS = 24 * 60 * 60 * 1000;

@SubCommand({
  name: 'roll',
  description: 'a successor of a key (shown this once); the old one works until the overlap ends',
})
export class KeyRollCommand extends AdminCommand {
  constructor(
    private readonly keys: ApiKeyAdminService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { id: string; overlap?: number } & JsonFlag) {
    const { rolled, successor } = await this.keys.roll(
      options.id,
      options.overlap ?? DEFAULT_OVERLAP_MS,
    );
    const { id, name, prefix, createdAt, expiresAt, key } = successor;
    this.output.print(
      options.json,
      {
        rolled: { id: rolled.id, expiresAt: rolled.expiresAt, rolledAt: rolled.rolledAt },
        successor: { id, name, prefix, createdAt, expiresAt, key },
      },
      () =>
        `Rolled key ${rolled.id}: it works until ${formatDate(rolled.expiresAt)}.\n` +
        `Successor ${id} "${name}"${expiresAt ? `, expiring at ${formatDate(expiresAt)}` : ''}.\n` +
        `Key (shown this once, store it now): ${key}`,
    );
  }

  @Option({ flags: '--id <keyId>', description: 'key id (see key list)', required: true })
  parseId(value: string): string {
    return flags.text('--id', value);
  }

  @Option({
    flags: '--overlap <duration>',
    description: 'how long the old key keeps working: 24h unless given, 7d at most',
  })
  parseOverlap(value: string): number {
    const ms = flags.duration('--overlap', value);
    if (ms > MAX_ROLL_OVERLAP_MS) {
      throw new UsageError(`--overlap must be at most 7d, not ${JSON.stringify(value)}`);
    }
    return ms;
  }
}

@Command({
  name: 'key',
  description: 'create, list, roll and revoke API keys',
  subCommands: [KeyCreateCommand, KeyListCommand, KeyRollCommand, KeyRevokeCommand],
  allowUnknownOptions: true,
})
export class KeyCommand extends CommandGroup {}
