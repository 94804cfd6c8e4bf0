import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Database } from '../database/database';
import { pingCheck } from './ping-check';

const TIMEOUT_MS = 2_000;

/** `SELECT 1` through the primary's pool (the path every request's key lookup takes), and the replicas. */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly database: Database,
    private readonly health: HealthIndicatorService,
  ) {}

  pingCheck<Key extends string>(key: Key) {
    return pingCheck(this.health, key, () => this.database.query('SELECT 1', []), TIMEOUT_MS);
  }

  get hasReplicas(): boolean {
    return this.database.replicaReads !== undefined;
  }

  /**
   * Each read replica as the last background check left it: in use, or skipped and why. Always
   * up: with every replica skipped the reads go to the primary, so the instance still serves.
   */
  replicas<Key extends string>(key: Key) {
    const replicas = this.database.replicaReads?.replicas ?? [];
    return this.health
      .check(key)
      .up(Object.fromEntries(replicas.map((replica) => [replica.name, replica.status()])));
  }
}
