import { CommandRunner, Option } from 'nest-commander';
import { CliOutput, UsageError } from './cli-output';

export interface JsonFlag {
  json?: boolean;
}

/** A command of the admin tool: every one takes `--json` and prints through CliOutput. */
export abstract class AdminCommand extends CommandRunner {
  constructor(protected readonly output: CliOutput) {
    super();
  }

  @Option({ flags: '--json', description: 'print the result as one JSON document' })
  parseJson(): boolean {
    return true;
  }
}

/**
 * `workspace` or `key` alone, or followed by something that is not one of its commands. Declared
 * with `allowUnknownOptions`, so that `workspace delete --id x` is named as an unknown command
 * rather than as an unknown option.
 */
export abstract class CommandGroup extends CommandRunner {
  run(args: string[]): Promise<void> {
    const group = this.command.name();
    const commands = this.command.commands.map((command) => command.name()).join(', ');
    const [first] = args;
    let message = `missing command: ${group} needs one of ${commands}`;
    if (first?.startsWith('-')) message = `unknown option '${first}' for ${group}: ${message}`;
    else if (first) message = `unknown command "${group} ${first}": ${group} has ${commands}`;
    return Promise.reject(new UsageError(message));
  }
}
