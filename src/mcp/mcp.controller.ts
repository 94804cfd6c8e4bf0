import { All, Controller, HttpException, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/public.decorator';
import { McpEndpoint } from './mcp-endpoint';

/**
 * The MCP endpoint (docs/agents.md): POST behind the same guards as /v1 (key, in-flight limit,
 * per-minute budget); any other method is a 405 naming POST, without a key (there is nothing to
 * protect, and a client probing for a server-sent stream learns at once that there is none).
 * Not part of the REST contract's OpenAPI document.
 */
@ApiExcludeController()
@Controller('mcp')
export class McpController {
  constructor(private readonly endpoint: McpEndpoint) {}

  @Post()
  async call(@Req() request: Request, @Res() response: Response): Promise<void> {
    // ApiKeyGuard has authenticated the request before any handler runs.
    if (!request.auth) throw new Error('POST /mcp reached without ApiKeyGuard');
    await this.endpoint.handle(request, response, request.auth);
  }

  @All()
  @Public()
  otherMethods(@Res({ passthrough: true }) response: Response): never {
    response.setHeader('Allow', 'POST');
    throw new HttpException('Only POST is served here', HttpStatus.METHOD_NOT_ALLOWED);
  }
}
