import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Clock } from '../common/clock';
import { Environment, requireWebhookSecretKey } from '../config/environment';
import { Database } from '../database/database';
import { newSigningSecret } from './signing-secret';
import { sealSecret } from './secret-box';
import { EVENT_TYPES, type EventType, PAGE_FILTERED_TYPES } from './webhook-events';
import { urlProblem } from './webhook-url';
import {
  createEndpoint,
  type CreatedEndpointRow,
  type DeliveryAttempt,
  deleteEndpoint,
  endpointExists,
  type EndpointSummary,
  latestDeliveries,
  listEndpoints,
  lockEndpointSecret,
  rotateSecret,
  setEndpointEnabled,
  workspaceExists,
} from './sql/endpoints.sql';

/** How long a rotated-out secret still signs deliveries, beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface CreatedEndpoint extends CreatedEndpointRow {
  /** Shown once: only its encryption is stored. */
  secret: string;
}

/** The admin tool's side of webhooks: endpoints and their secrets, and what was delivered. */
@Injectable()
export class WebhookEndpointsService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly environment: Environment,
  ) {}

  /** The admin tool's statements run on the database's pool. */
  private get sql() {
    return this.database.pool;
  }

  /**
   * `pages`: page patterns (items/page-patterns.ts, parsed) that the visit events' visits must
   * match; the other types are not filtered, so an endpoint with pages takes a visit type at least.
   */
  async create(
    workspaceId: string,
    url: string,
    eventTypes: EventType[],
    pages: string[] | null = null,
  ): Promise<CreatedEndpoint> {
    const key = requireWebhookSecretKey(this.environment);
    const problem = urlProblem(url, this.environment.WEBHOOK_ALLOW_HTTP);
    if (problem) throw new BadRequestException(`--url: ${problem}`);
    if (pages !== null && !eventTypes.some((type) => PAGE_FILTERED_TYPES.includes(type))) {
      throw new BadRequestException(
        `--pages filters the visit events only: give --events with ${PAGE_FILTERED_TYPES.join(' or ')}`,
      );
    }
    if (!(await workspaceExists(this.sql, workspaceId))) {
      throw new NotFoundException(`workspace ${workspaceId} does not exist`);
    }
    const id = `whe_${randomBytes(12).toString('hex')}`;
    const secret = newSigningSecret();
    const sealed = sealSecret(key, id, secret);
    const endpoint = { id, workspaceId, url, eventTypes, pages };
    const created = await createEndpoint(this.sql, endpoint, sealed, new Date(this.clock.now()));
    return { ...created, secret };
  }

  async list(workspaceId: string): Promise<EndpointSummary[]> {
    return listEndpoints(this.sql, workspaceId);
  }

  async setEnabled(id: string, enabled: boolean): Promise<void> {
    const reason = enabled ? null : 'disabled by an administrator';
    if (!(await setEndpointEnabled(this.sql, id, enabled, reason))) throw notFound(id);
  }

  async delete(id: string): Promise<void> {
    if (!(await deleteEndpoint(this.sql, id))) throw notFound(id);
  }

  /**
   * A new secret, returned once; the current one keeps signing beside it for ROTATION_OVERLAP_MS,
   * so that receivers can switch without losing a delivery. A second rotation within the overlap
   * ends the first one's.
   */
  async rotateSecret(id: string): Promise<{ id: string; secret: string; previousExpiresAt: Date }> {
    const key = requireWebhookSecretKey(this.environment);
    const client = await this.database.pool.connect();
    try {
      await client.query('BEGIN');
      const previousSealed = await lockEndpointSecret(client, id);
      if (previousSealed === undefined) throw notFound(id);
      const secret = newSigningSecret();
      const previousExpiresAt = new Date(this.clock.now() + ROTATION_OVERLAP_MS);
      const sealed = sealSecret(key, id, secret);
      await rotateSecret(client, id, { sealed, previousSealed, previousExpiresAt });
      await client.query('COMMIT');
      return { id, secret, previousExpiresAt };
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  async deliveries(id: string, limit: number): Promise<DeliveryAttempt[]> {
    if (!(await endpointExists(this.sql, id))) throw notFound(id);
    return latestDeliveries(this.sql, id, limit);
  }
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

function notFound(id: string): NotFoundException {
  return new NotFoundException(`webhook endpoint ${id} does not exist`);
}
