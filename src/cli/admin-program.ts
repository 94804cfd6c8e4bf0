import { Inject, Injectable } from '@nestjs/common';
import { type CommandRunner, InjectCommander } from 'nest-commander';
import { ADMIN_IO, type AdminIo } from './cli-output';

/** commander's Command, as nest-commander hands it to every command. */
type Program = Parameters<CommandRunner['setCommand']>[0];

/**
 * The command tree that nest-commander built from the decorated commands, made fit to run
 * in-process: errors throw instead of exiting the process, output goes to the given streams, and a
 * command refuses arguments it does not take.
 */
@Injectable()
export class AdminProgram {
  constructor(
    @InjectCommander() private readonly root: Program,
    @Inject(ADMIN_IO) private readonly io: AdminIo,
  ) {}

  async run(argv: string[]): Promise<void> {
    this.root.name('admin').description('The operator admin tool: npm run -s admin -- <command>');
    this.prepare(this.root);
    await this.root.parseAsync(argv, { from: 'user' });
  }

  private prepare(command: Program): void {
    command.exitOverride();
    command.configureOutput({ writeOut: this.io.stdout, writeErr: this.io.stderr });
    if (command.commands.length === 0) command.allowExcessArguments(false);
    for (const sub of command.commands) this.prepare(sub);
  }
}
