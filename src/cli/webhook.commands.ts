import { Injectable } from '@nestjs/common';
import { Command, Option, SubCommand } from 'nest-commander';
import { parsePagePatterns } from '../items/page-patterns';
import { RefusedValue } from '../http/query-parameter';
import type { EventType } from '../webhooks/webhook-events';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES } from '../webhooks/webhook-events';
import { isEventType, WebhookEndpointsService } from '../webhooks/webhook-endpoints.service';
import { AdminCommand, CommandGroup, type JsonFlag } from './admin-command';
import { CliOutput, formatDate, oneLine, table, UsageError } from './cli-output';
import * as flags from './flags';

const DEFAULT_DELIVERIES = 20;
const MAX_DELIVERIES = 1_000;

// Injectable so that its constructor's parameter types are emitted, for the commands below.
@Injectable()
abstract class EndpointCommand extends AdminCommand {
  constructor(
    protected readonly webhooks: WebhookEndpointsService,
    output: CliOutput,
  ) {
    super(output);
  }

  @Option({
    flags: '--id <endpointId>',
    description: 'endpoint id (see webhook list)',
    required: true,
  })
  parseId(value: string): string {
    return flags.text('--id', value);
  }
}

@SubCommand({
  name: 'create',
  description: 'add an endpoint to a workspace; its signing secret is shown this once',
})
export class WebhookCreateCommand extends AdminCommand {
  constructor(
    private readonly webhooks: WebhookEndpointsService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(
    _args: string[],
    options: { workspace: string; url: string; events?: EventType[]; pages?: string[] } & JsonFlag,
  ) {
    const events = [...new Set(options.events ?? DEFAULT_EVENT_TYPES)];
    const pages = options.pages ?? null;
    const created = await this.webhooks.create(options.workspace, options.url, events, pages);
    this.output.print(
      options.json,
      created,
      () =>
        `Created webhook endpoint ${created.id} for workspace ${created.workspaceId}: ` +
        `${created.url} (${created.eventTypes.join(', ')}` +
        `${created.pages ? `; visits with a page view of ${created.pages.join(',')}` : ''}).\n` +
        `Signing secret (shown this once, store it now): ${created.secret}`,
    );
  }

  @Option({ flags: '--workspace <id>', description: 'workspace id', required: true })
  parseWorkspace(value: string): string {
    return flags.text('--workspace', value);
  }

  @Option({ flags: '--url <url>', description: 'https:// URL of the receiver', required: true })
  parseUrl(value: string): string {
    return flags.text('--url', value);
  }

  @Option({
    flags: '--events <types>',
    description:
      `comma-separated event types, of ${EVENT_TYPES.join(', ')} ` +
      `(default: ${DEFAULT_EVENT_TYPES.join(', ')})`,
  })
  parseEvents(value: string, previous: EventType[] = []): EventType[] {
    const types = flags.idList('--events', value);
    const unknown = types.filter((type) => !isEventType(type));
    if (unknown.length > 0) {
      throw new UsageError(
        `--events: unknown event type ${JSON.stringify(unknown[0])}; the types are ${EVENT_TYPES.join(', ')}`,
      );
    }
    return [...previous, ...(types as EventType[])];
  }

  @Option({
    flags: '--pages <patterns>',
    description:
      'comma-separated page patterns (/pricing, /demo*): the visit events come only for visits ' +
      'with a matching page view (1 to 10; needs a visit event type in --events)',
  })
  parsePages(value: string, previous: string[] = []): string[] {
    // Each value given so far again: the patterns of a repeated flag count together.
    const parsed = parsePagePatterns('--pages', [...previous, value]);
    if (parsed instanceof RefusedValue) throw new UsageError(parsed.messages.join('; '));
    return parsed.patterns;
  }
}

@SubCommand({
  name: 'list',
  description: 'list the endpoints of a workspace: state, failures, last success (no secrets)',
})
export class WebhookListCommand extends AdminCommand {
  constructor(
    private readonly webhooks: WebhookEndpointsService,
    output: CliOutput,
  ) {
    super(output);
  }

  async run(_args: string[], options: { workspace: string } & JsonFlag) {
    const endpoints = await this.webhooks.list(options.workspace);
    this.output.print(options.json, endpoints, () =>
      table(
        [
          'ID',
          'URL',
          'STATE',
          'FAILING SINCE',
          'FAILURES',
          'LAST SUCCESS',
          'PENDING',
          'EVENTS',
          'PAGES',
        ],
        endpoints.map((e) => [
          e.id,
          e.url,
          e.disabledReason ? `${e.state} (${e.disabledReason})` : e.state,
          formatDate(e.failingSince),
          String(e.failures),
          formatDate(e.lastSuccessAt),
          String(e.pending),
          e.eventTypes.join(','),
          e.pages ? e.pages.join(',') : '-',
        ]),
        `No webhook endpoints in workspace ${options.workspace}.`,
      ),
    );
  }

  @Option({ flags: '--workspace <id>', description: 'workspace id', required: true })
  parseWorkspace(value: string): string {
    return flags.text('--workspace', value);
  }
}

@SubCommand({ name: 'disable', description: 'stop delivering to an endpoint (enable resumes)' })
export class WebhookDisableCommand extends EndpointCommand {
  async run(_args: string[], options: { id: string } & JsonFlag) {
    await this.webhooks.setEnabled(options.id, false);
    this.output.print(options.json, { id: options.id, state: 'disabled' }, () => {
      return `Disabled webhook endpoint ${options.id}; its events wait for enable.`;
    });
  }
}

@SubCommand({
  name: 'enable',
  description: 'deliver to an endpoint again, from where it stopped',
})
export class WebhookEnableCommand extends EndpointCommand {
  async run(_args: string[], options: { id: string } & JsonFlag) {
    await this.webhooks.setEnabled(options.id, true);
    this.output.print(options.json, { id: options.id, state: 'enabled' }, () => {
      return `Enabled webhook endpoint ${options.id}; delivery resumes where it stopped.`;
    });
  }
}

@SubCommand({ name: 'delete', description: 'delete an endpoint with its events and attempts' })
export class WebhookDeleteCommand extends EndpointCommand {
  async run(_args: string[], options: { id: string } & JsonFlag) {
    await this.webhooks.delete(options.id);
    this.output.print(options.json, { id: options.id, deleted: true }, () => {
      return `Deleted webhook endpoint ${options.id}.`;
    });
  }
}

@SubCommand({
  name: 'rotate-secret',
  description: 'a new signing secret (shown once); the old one also signs for 24 hours',
})
export class WebhookRotateSecretCommand extends EndpointCommand {
  async run(_args: string[], options: { id: string } & JsonFlag) {
    const rotated = await this.webhooks.rotateSecret(options.id);
    this.output.print(
      options.json,
      rotated,
      () =>
        `New signing secret of ${rotated.id} (shown this once, store it now): ${rotated.secret}\n` +
        `Deliveries carry signatures by both secrets until ${formatDate(rotated.previousExpiresAt)}.`,
    );
  }
}

// A row per attempt: a multi-line error (OpenSSL's) or answer is one line, cut; --json has it all.
const RESULT_WIDTH = 60;
const RESPONSE_WIDTH = 80;

@SubCommand({
  name: 'deliveries',
  description: 'the latest delivery attempts of an endpoint, newest first',
})
export class WebhookDeliveriesCommand extends EndpointCommand {
  async run(_args: string[], options: { id: string; limit?: number } & JsonFlag) {
    const attempts = await this.webhooks.deliveries(
      options.id,
      options.limit ?? DEFAULT_DELIVERIES,
    );
    this.output.print(options.json, attempts, () =>
      table(
        ['EVENT', 'TYPE', 'ATTEMPT', 'TIME', 'RESULT', 'DURATION', 'EVENT STATE', 'RESPONSE'],
        attempts.map((a) => [
          a.eventId,
          a.type,
          String(a.attempt),
          formatDate(a.attemptedAt),
          oneLine(a.status === null ? (a.error ?? '') : String(a.status), RESULT_WIDTH),
          `${a.durationMs} ms`,
          a.eventState,
          oneLine(a.responseExcerpt, RESPONSE_WIDTH),
        ]),
        `No delivery attempts for ${options.id}.`,
      ),
    );
  }

  @Option({ flags: '--limit <n>', description: `how many (default ${DEFAULT_DELIVERIES})` })
  parseLimit(value: string): number {
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!(n >= 1 && n <= MAX_DELIVERIES)) {
      throw new UsageError(
        `--limit must be a whole number from 1 to ${MAX_DELIVERIES}, not ${JSON.stringify(value)}`,
      );
    }
    return n;
  }
}

@Command({
  name: 'webhook',
  description: 'manage the webhook endpoints of a workspace',
  subCommands: [
    WebhookCreateCommand,
    WebhookListCommand,
    WebhookDisableCommand,
    WebhookEnableCommand,
    WebhookDeleteCommand,
    WebhookRotateSecretCommand,
    WebhookDeliveriesCommand,
  ],
  allowUnknownOptions: true,
})
export class WebhookCommand extends CommandGroup {}

/** Every provider of the `webhook` command group, for CliModule. */
export const WEBHOOK_COMMANDS = [
  WebhookCommand,
  WebhookCreateCommand,
  WebhookListCommand,
  WebhookDisableCommand,
  WebhookEnableCommand,
  WebhookDeleteCommand,
  WebhookRotateSecretCommand,
  WebhookDeliveriesCommand,
];
