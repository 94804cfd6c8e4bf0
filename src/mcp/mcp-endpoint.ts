import { Inject, Injectable } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { AuthenticatedKey } from '../auth/api-key';
import { ROOT_LOGGER } from '../logging/app-logger';
import { requestIdOf } from '../logging/request-log';
import { ToolServer } from './tool-server';

/**
 * The largest request body POST /mcp reads: a `tools/call` of these tools is a few hundred bytes,
 * an `initialize` about one kilobyte. A larger body is a 413 before anything is parsed.
 */
export const MCP_MAX_BODY_BYTES = 64 * 1024;

/**
 * POST /mcp: the read API as a Model Context Protocol server (docs/agents.md). Adapts Express's
 * request to the SDK's web-standard transport and routes it by protocol era, to a fresh, small
 * server per request (the SDK's stateless serving of both eras) whose tools (tool-server.ts)
 * close over the request's workspace.
 */
@Injectable()
export class McpEndpoint {
  private modern?: McpHttpHandler;

  constructor(
    private readonly toolServer: ToolServer,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  /** Prepares the tools from the document the server publishes (app.setup.ts, at start). */
  describe(document: OpenAPIObject): void {
    this.toolServer.prepare(document);
    // The 2026-07-28 era. 'auto' answers JSON unless a handler emits a message before its result,
    // which none of these tools does ('json' would say the same with a warning on the console).
    this.modern = createMcpHandler((context) => this.toolServer.serverFor(context), {
      legacy: 'reject',
      responseMode: 'auto',
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
      onerror: (error) => this.logger.debug({ context: 'McpEndpoint' }, error.message),
    });
  }

  /** Serves one POST /mcp of an authenticated key. */
  async handle(request: Request, response: Response, auth: AuthenticatedKey): Promise<void> {
    const modern = this.modern;
    if (!modern) throw new Error('McpEndpoint.describe() was not called at start');
    // The key's identity rides as the SDK's pass-through authInfo; the key itself never does.
    const authInfo = {
      token: '',
      clientId: auth.keyId,
      scopes: [...auth.scopes],
      // The request's id, for the log line of a call that failed on our side.
      extra: { auth, requestId: requestIdOf(request) },
    };
    const serve = toNodeHandler({
      fetch: async (web) =>
        (await isLegacyRequest(web, undefined, { maxRequestBodySize: MCP_MAX_BODY_BYTES }))
          ? this.serveLegacy(web, authInfo)
          : modern.fetch(web, { authInfo }),
    });
    // The adapter would forward `request.auth` as authInfo; ours (AuthenticatedKey) is not the
    // SDK's shape, and the authInfo above replaces it.
    await serve(request as unknown as Parameters<typeof serve>[0], response);
  }

  /**
   * The 2025 era (2025-03-26 to 2025-11-25): stateless, one server per request, and JSON answers
   * (the SDK's own stateless fallback answers with a server-sent event stream).
   */
  private async serveLegacy(
    web: globalThis.Request,
    authInfo: AuthInfo,
  ): Promise<globalThis.Response> {
    const server = this.toolServer.serverFor({ era: 'legacy', authInfo, requestInfo: web });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(web, { authInfo });
    } finally {
      await server.close();
    }
  }
}
