import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Clock } from '../common/clock';
import { Environment, requireWebhookSecretKey } from '../config/environment';
import { Database } from '../database/database';
import { newSigningSecret } from './delivery/secret';
import { sealSecret } from './secret-box';
import { EVENT_TYPES, type EventType } from './webhook-events';
import { urlProblem } from './webhook-url';
import {
  CREATE_ENDPOINT_SQL,
  DELETE_ENDPOINT_SQL,
  DELIVERIES_SQL,
  ENDPOINT_SECRET_SQL,
  LIST_ENDPOINTS_SQL,
  ROTATE_SECRET_SQL,
  SET_ENABLED_SQL,
} from './webhooks.sql';

/** How long a rotated-out secret still signs deliveries, beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface CreatedEndpoint {
  id: string;
  workspaceId: string;
  url: string;
  eventTypes: EventType[];
  createdAt: Date;
  /** Shown once: only its encryption is stored. */
  secret: string;
}

export interface EndpointSummary {
  id: string;
  url: string;
  eventTypes: EventType[];
  state: 'enabled' | 'disabled';
  disabledReason: string | null;
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  createdAt: Date;
  failures: number;
  pending: number;
}

export interface DeliveryAttempt {
  eventId: string;
  type: EventType;
  attempt: number;
  attemptedAt: Date;
  status: number | null;
  error: string | null;
  durationMs: number;
  /** The receiver's answer: its first 1 KB, as received ('' when none came). */
  responseExcerpt: string;
  eventState: string;
}

/** The admin tool's side of webhooks: endpoints and their secrets, and what was delivered. */
@Injectable()
export class WebhookEndpointsService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly environment: Environment,
  ) {}

  async create(
    workspaceId: string,
    url: string,
    eventTypes: EventType[],
  ): Promise<CreatedEndpoint> {
    const key = requireWebhookSecretKey(this.environment);
    const problem = urlProblem(url, this.environment.WEBHOOK_ALLOW_HTTP);
    if (problem) throw new BadRequestException(`--url: ${problem}`);
    const [workspace] = await this.database.query('SELECT 1 FROM workspaces WHERE id = $1', [
      workspaceId,
    ]);
    if (!workspace) throw new NotFoundException(`workspace ${workspaceId} does not exist`);
    const id = `whe_${randomBytes(12).toString('hex')}`;
    const secret = newSigningSecret();
    const [created] = await this.database.query<Omit<CreatedEndpoint, 'secret'>>(
      CREATE_ENDPOINT_SQL,
      [id, workspaceId, url, eventTypes, sealSecret(key, id, secret), new Date(this.clock.now())],
    );
    return { ...created, secret };
  }

  async list(workspaceId: string): Promise<EndpointSummary[]> {
    return this.database.query<EndpointSummary>(LIST_ENDPOINTS_SQL, [workspaceId]);
  }

  async setEnabled(id: string, enabled: boolean): Promise<void> {
    const reason = enabled ? null : 'disabled by an administrator';
    const rows = await this.database.query(SET_ENABLED_SQL, [id, enabled, reason]);
    if (rows.length === 0) throw notFound(id);
  }

  async delete(id: string): Promise<void> {
    const rows = await this.database.query(DELETE_ENDPOINT_SQL, [id]);
    if (rows.length === 0) throw notFound(id);
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
      const { rows } = await client.query<{ secret: string }>(ENDPOINT_SECRET_SQL, [id]);
      if (rows.length === 0) throw notFound(id);
      const secret = newSigningSecret();
      const previousExpiresAt = new Date(this.clock.now() + ROTATION_OVERLAP_MS);
      await client.query(ROTATE_SECRET_SQL, [
        id,
        sealSecret(key, id, secret),
        rows[0].secret,
        previousExpiresAt,
      ]);
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
    const [endpoint] = await this.database.query('SELECT 1 FROM webhook_endpoints WHERE id = $1', [
      id,
    ]);
    if (!endpoint) throw notFound(id);
    return this.database.query<DeliveryAttempt>(DELIVERIES_SQL, [id, limit]);
  }
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

function notFound(id: string): NotFoundException {
  return new NotFoundException(`webhook endpoint ${id} does not exist`);
}
