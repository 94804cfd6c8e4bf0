import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Database } from '../database/database';
import { pingCheck } from './ping-check';

const TIMEOUT_MS = 2_000;

/** `SELECT 1` through the application's own pool: the path every request takes. */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly database: Database,
    private readonly health: HealthIndicatorService,
  ) {}

  pingCheck<Key extends string>(key: Key) {
    return pingCheck(this.health, key, () => this.database.query('SELECT 1', []), TIMEOUT_MS);
  }
}
