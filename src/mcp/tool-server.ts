import {
  BadRequestException,
  GoneException,
  HttpException,
  Inject,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import {
  type CallToolResult,
  type McpRequestContext,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { AuthenticatedKey } from '../auth/api-key';
import { missingScopes, missingScopesMessage, scopesNeeded } from '../auth/scopes';
import { CompaniesService } from '../companies/companies.service';
import { isDatabaseUnavailable } from '../database/database-errors';
import { isVersionedJson } from '../http/json-text';
import { StrictValidationPipe, VALIDATION_OPTIONS } from '../http/strict-validation.pipe';
import { LeadsService } from '../leads/leads.service';
import { ROOT_LOGGER } from '../logging/app-logger';
import { VisitsService } from '../visits/visits.service';
import { listedTool, operationParameters } from './tool-schemas';
import { summaryLine, type ToolDefinition, type ToolServices, TOOLS } from './tools';

const SERVER_INFO = { name: 'visitor-read-api', title: 'Visitor read API', version: '1.0.0' };

/** A tool ready to list and call: its MCP description, made once from the OpenAPI document. */
interface PreparedTool {
  definition: ToolDefinition;
  listed: Tool;
  /** Whether its operation takes the item's id in the path (`get_company`): the `id` argument. */
  takesId: boolean;
}

// Fixed texts: a tool's error never holds internals, SQL, nor anything the caller sent but names.
const TEXTS = {
  notFound: (tool: ToolDefinition) =>
    `No ${tool.noun} with this id in this workspace. Ids come from list_${tool.noun === 'company' ? 'companies' : `${tool.noun}s`} or get_${tool.noun}'s results.`,
  cursorExpired: (tool: ToolDefinition) =>
    `The cursor has expired: the changes it pointed at were pruned. Call ${tool.name} without a ` +
    'cursor to start again from every live item, and rebuild your copy from it.',
  unavailable:
    'The service is temporarily unavailable (its database is overloaded or unreachable). ' +
    'Try the same call again in a few seconds.',
  internal:
    'The call failed on the server. Try again later; if it keeps failing, report it with the time of the call.',
  unknownTool: (name: string) =>
    `There is no tool named ${JSON.stringify(name.slice(0, 60))}. Call tools/list for the tools.`,
};

/**
 * The tools of POST /mcp, registered on a small server made for each request (mcp-endpoint.ts
 * routes the request to it in its protocol era). Their descriptions and schemas are made once, at
 * start, from the OpenAPI document; their calls go to the REST controllers' services through the
 * same validation, so that a tool's `structuredContent` is the REST body for the same parameters.
 */
@Injectable()
export class ToolServer {
  private tools: PreparedTool[] = [];
  private readonly services: ToolServices;
  private readonly validation = new StrictValidationPipe(VALIDATION_OPTIONS);

  constructor(
    companies: CompaniesService,
    leads: LeadsService,
    visits: VisitsService,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.services = { companies, leads, visits };
  }

  /** Prepares the tools from the document the server publishes (at start). */
  prepare(document: OpenAPIObject): void {
    this.tools = TOOLS.map((definition) => {
      const parameters = operationParameters(document, definition.operation.operationId);
      return {
        definition,
        listed: listedTool(definition, document, parameters),
        takesId: parameters.some((parameter) => parameter.in === 'path'),
      };
    });
  }

  /** A server for one request: its tools close over the request's key. */
  serverFor(context: McpRequestContext): Server {
    const auth = context.authInfo?.extra?.auth as AuthenticatedKey;
    const requestId = context.authInfo?.extra?.requestId as string | undefined;
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'Read-only access to one workspace of a B2B visitor-identification product: the companies ' +
        'identified on its website (with contacts), its qualified leads, change feeds, and the ' +
        "companies' visits with the pages they viewed. The lists of companies and leads are " +
        'sorted by intentScore, highest first; the visits newest first.',
    });
    server.setRequestHandler('tools/list', () => ({
      tools: this.tools.map((tool) => tool.listed),
    }));
    server.setRequestHandler('tools/call', async (request) => {
      const { name, arguments: args = {} } = request.params;
      const tool = this.tools.find((candidate) => candidate.listed.name === name);
      if (!tool) return failure(TEXTS.unknownTool(name));
      const result = await this.call(tool, auth, args, requestId);
      return server.projectCallToolResult(result, tool.listed.outputSchema);
    });
    return server;
  }

  private async call(
    { definition: tool, takesId }: PreparedTool,
    auth: AuthenticatedKey,
    args: Record<string, unknown>,
    requestId: string | undefined,
  ): Promise<CallToolResult> {
    const { scopes, parameterScopes } = tool.operation;
    const missing = missingScopes(
      auth.scopes,
      scopesNeeded(scopes, parameterScopes, Object.keys(args)),
    );
    if (missing.length > 0) {
      return failure(`${missingScopesMessage(missing)}: ask for a key that has it.`);
    }
    try {
      const { id, ...rest } = args;
      const query: Record<string, unknown> = { ...rest };
      if (tool.limit && query.limit === undefined) query.limit = tool.limit.default;
      if (tool.limit && typeof query.limit === 'number' && query.limit > tool.limit.maximum) {
        return failure(`Invalid arguments: limit must not be greater than ${tool.limit.maximum}`);
      }
      if (takesId && (typeof id !== 'string' || id === '')) {
        return failure('Invalid arguments: id must be a non-empty string');
      }
      // An `id` given to a tool without one is an unknown argument, refused like any other.
      if (!takesId && id !== undefined) query.id = id;
      const validated = (await this.validation.transform(query, {
        type: 'query',
        metatype: tool.query,
      })) as never;
      const answer = await tool.call(this.services, auth.workspace, id as string, validated);
      const text = isVersionedJson(answer)
        ? answer.json
        : typeof answer === 'string'
          ? answer
          : JSON.stringify(answer);
      const body = JSON.parse(text) as Record<string, unknown>;
      return {
        content: [{ type: 'text', text: `${summaryLine(tool, body)}\n${text}` }],
        structuredContent: body,
      };
    } catch (error) {
      return failure(this.explain(tool, error, requestId));
    }
  }

  /** The fixed text of a failed call; what is not the caller's doing is logged. */
  private explain(tool: ToolDefinition, error: unknown, requestId: string | undefined): string {
    if (error instanceof NotFoundException) return TEXTS.notFound(tool);
    if (error instanceof GoneException) return TEXTS.cursorExpired(tool);
    if (error instanceof BadRequestException) {
      const { message } = error.getResponse() as { message?: unknown };
      const messages = Array.isArray(message) ? message : [error.message];
      return `Invalid arguments: ${messages.join('; ')}`;
    }
    const context = { context: 'McpEndpoint', requestId, tool: tool.name };
    if (isDatabaseUnavailable(error) || error instanceof HttpException) {
      this.logger.warn(context, `Tool call failed: ${(error as Error).message}`);
      return TEXTS.unavailable;
    }
    this.logger.error(context, error instanceof Error ? (error.stack ?? error.message) : 'error');
    return TEXTS.internal;
  }
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
