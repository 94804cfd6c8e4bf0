import { type DynamicModule, Module } from '@nestjs/common';
import { ClockModule } from '../common/clock';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { DeletionModule } from '../deletion/deletion.module';
import { ImportModule } from '../import/import.module';
import { PrismaModule } from '../prisma/prisma.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { AdminProgram } from './admin-program';
import { ADMIN_IO, type AdminIo, CliOutput } from './cli-output';
import { DeleteCommand } from './delete.command';
import { ImportCommand } from './import.command';
import { ImportVisitsCommand } from './import-visits.command';
import {
  KeyCommand,
  KeyCreateCommand,
  KeyListCommand,
  KeyRevokeCommand,
  KeyRollCommand,
} from './key.commands';
import { PruneChangesCommand } from './prune-changes.command';
import { PruneVisitsCommand } from './prune-visits.command';
import { SeedCommand } from './seed.command';
import { WEBHOOK_COMMANDS } from './webhook.commands';
import {
  WorkspaceCommand,
  WorkspaceCreateCommand,
  WorkspaceListCommand,
  WorkspaceUpdateCommand,
} from './workspace.commands';

/** The admin tool: the application's own modules, and commands that call their services. */
@Module({})
export class CliModule {
  /** `forHelp`: the command line asks only for help, which needs no configuration. */
  static register(io: AdminIo, forHelp = false): DynamicModule {
    return {
      module: CliModule,
      imports: [
        forHelp ? ConfigModule.forHelp() : ConfigModule,
        ClockModule,
        DatabaseModule,
        PrismaModule,
        WorkspacesModule,
        ImportModule,
        DeletionModule,
        WebhooksModule,
      ],
      providers: [
        { provide: ADMIN_IO, useValue: io },
        CliOutput,
        AdminProgram,
        WorkspaceCommand,
        WorkspaceCreateCommand,
        WorkspaceUpdateCommand,
        WorkspaceListCommand,
        KeyCommand,
        KeyCreateCommand,
        KeyListCommand,
        KeyRevokeCommand,
        KeyRollCommand,
        ImportCommand,
        ImportVisitsCommand,
        SeedCommand,
        DeleteCommand,
        PruneChangesCommand,
        PruneVisitsCommand,
        ...WEBHOOK_COMMANDS,
      ],
    };
  }
}
