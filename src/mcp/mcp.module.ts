import { type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { CompaniesModule } from '../companies/companies.module';
import { Environment } from '../config/environment';
import { LeadsModule } from '../leads/leads.module';
import { VisitsModule } from '../visits/visits.module';
import { McpController } from './mcp.controller';
import { McpEndpoint } from './mcp-endpoint';
import { ToolServer } from './tool-server';
import { allowedOrigins, originCheck } from './origin-check';

/** The read API for AI agents, as a remote MCP server at POST /mcp (docs/agents.md). */
@Module({
  imports: [CompaniesModule, LeadsModule, VisitsModule],
  controllers: [McpController],
  providers: [McpEndpoint, ToolServer],
  exports: [McpEndpoint],
})
export class McpModule implements NestModule {
  constructor(private readonly environment: Environment) {}

  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(originCheck(allowedOrigins(this.environment.MCP_ALLOWED_ORIGINS)))
      .forRoutes(McpController);
  }
}
