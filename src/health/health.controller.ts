import { Controller, Get, Header, UseFilters } from '@nestjs/common';
import { HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../auth/public.decorator';
import { jsonText, type JsonText } from '../http/json-text';
import { DatabaseHealthIndicator } from './database.health';
import { HealthCheckFailedFilter } from './health-check-failed.filter';
import { RedisHealthIndicator } from './redis.health';

/**
 * Probes for the orchestrator and the load balancer: outside /v1 (and its OpenAPI document), no
 * key, no rate limit. Not terminus's @HealthCheck(): its Cache-Control would replace the no-store
 * that every response carries, and the routes are not part of the documented contract.
 */
/** The body terminus gives for no check, as JSON text made once. */
const LIVE = jsonText<HealthCheckResult>(
  JSON.stringify({ status: 'ok', info: {}, error: {}, details: {} } satisfies HealthCheckResult),
);

@Controller('health')
@Public()
@UseFilters(HealthCheckFailedFilter)
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly redis: RedisHealthIndicator,
  ) {}

  /**
   * The process answers. No dependency is checked: an outage of one is not cured by a restart.
   * The body is the one terminus gives for no check, written once: terminus's executor cost about
   * a tenth of the CPU of this probe (`node --cpu-prof`), which runs every few seconds per instance,
   * and Express's `res.json` (serializing it, its charset) 2 % more.
   */
  @Get('live')
  @Header('Content-Type', 'application/json; charset=utf-8')
  live(): JsonText<HealthCheckResult> {
    return LIVE;
  }

  /**
   * The instance can serve: the primary answers, and Redis when configured; 503 otherwise. The
   * read replicas are reported, each in use or skipped, without failing it (reads fall back).
   */
  @Get('ready')
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.pingCheck('database'),
      ...(this.database.hasReplicas ? [() => this.database.replicas('replicas')] : []),
      ...(this.redis.isConfigured ? [() => this.redis.pingCheck('redis')] : []),
    ]);
  }
}
