import { plainToInstance, Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';
import type { LevelWithSilent } from 'pino';
import { StartupError } from '../common/startup-error';
import { IsTrustProxy } from './trust-proxy';

/** The value shipped in .env.example: fine for a laptop, refused in production. */
export const EXAMPLE_API_KEY_SECRET = 'change-me-to-a-long-random-secret-of-32-or-more-chars';

/** Every setting of the service, read from the environment once at start. */
export class Environment {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @Matches(/^postgres(ql)?:\/\/\S+$/, {
    message: 'DATABASE_URL must be a postgresql:// connection URL',
  })
  DATABASE_URL!: string;

  // Read replicas (hot standbys of DATABASE_URL's server), one URL or several separated by commas:
  // the lists, the change feeds and the single-item reads go to one that is up and recent enough
  // (src/database/read-replicas.ts). Unset: everything on DATABASE_URL.
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/[^\s,]+(,postgres(ql)?:\/\/[^\s,]+)*$/, {
    message: 'DATABASE_READ_URL must be postgresql:// URLs separated by commas',
  })
  DATABASE_READ_URL?: string;

  // A replica whose data is older than this is skipped until it catches up.
  @Type(() => Number)
  @IsInt()
  @Min(100)
  READ_REPLICA_MAX_LAG_MS = 5_000;

  // Where the migrations run (npm run db:migrate): a direct connection, not through a pooler in
  // transaction mode, because the migrator holds a session advisory lock. Unset: DATABASE_URL.
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, {
    message: 'DATABASE_MIGRATION_URL must be a postgresql:// connection URL',
  })
  DATABASE_MIGRATION_URL?: string;

  // `pgbouncer`: DATABASE_URL and DATABASE_READ_URL lead to PgBouncer in transaction mode, which
  // refuses the session settings the pool otherwise sends when it connects; the database role
  // must then carry them (docs/scaling.md, PgBouncer). `none`: direct connections.
  @IsIn(['none', 'pgbouncer'])
  DATABASE_POOLER: 'none' | 'pgbouncer' = 'none';

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(65535)
  PORT = 3000;

  // Keys are stored as HMAC-SHA-256 under this secret: changing it invalidates every key.
  @IsString()
  @IsNotEmpty()
  @MinLength(32, { message: 'API_KEY_SECRET must be at least 32 characters long' })
  API_KEY_SECRET!: string;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  RATE_LIMIT_PER_MINUTE = 120;

  // How long the change feeds keep deletion records (prune-changes removes older ones); a cursor
  // that points before a removed one is answered 410.
  @Type(() => Number)
  @IsInt()
  @Min(1)
  CHANGES_RETENTION_DAYS = 30;

  // Requests that fail authentication, per client address.
  @Type(() => Number)
  @IsInt()
  @Min(1)
  AUTH_FAILURE_LIMIT_PER_MINUTE = 300;

  // pino's levels; `silent` writes nothing (the tests' default).
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL: LevelWithSilent = 'info';

  // The store of both rate limits, shared by every instance. Unset: each process counts on its
  // own, which holds for a single instance only.
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  // The proxies whose X-Forwarded-For is believed (see trust-proxy.ts); unset: none.
  @IsOptional()
  @IsTrustProxy()
  TRUST_PROXY?: string;

  // The port of GET /metrics (Prometheus), a server apart from the API's so that the proxy, which
  // forwards only PORT, never exposes it. Unset: no metrics at all, and no cost per request.
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(65535)
  METRICS_PORT?: number;
}

// The variables without a default, and what to set them to. Unset (or empty), each is said to be
// required, rather than malformed ("must be a postgresql:// connection URL") or in several words.
const REQUIRED: Record<string, string> = {
  DATABASE_URL: 'DATABASE_URL is required (the postgresql:// URL of the database)',
  API_KEY_SECRET: 'API_KEY_SECRET is required (a secret of at least 32 characters)',
};

/** For ConfigModule: a clear message naming each missing or bad variable, or the typed values. */
export function validateEnvironment(raw: Record<string, unknown>): Environment {
  const environment = plainToInstance(Environment, raw, { exposeDefaultValues: true });
  const missing = Object.keys(REQUIRED).filter(
    (name) => raw[name] === undefined || raw[name] === '',
  );
  const errors = validateSync(environment, { skipMissingProperties: false });
  const messages = [
    ...missing.map((name) => REQUIRED[name]),
    ...errors
      .filter((error) => !missing.includes(error.property))
      .flatMap((error) => Object.values(error.constraints ?? {})),
  ];
  if (
    environment.NODE_ENV === 'production' &&
    environment.API_KEY_SECRET === EXAMPLE_API_KEY_SECRET
  ) {
    messages.push('API_KEY_SECRET must not be the example value of .env.example in production');
  }
  if (environment.METRICS_PORT !== undefined && environment.METRICS_PORT === environment.PORT) {
    messages.push(
      'METRICS_PORT must differ from PORT: the metrics are never served on the API port',
    );
  }
  if (messages.length > 0) {
    throw new StartupError(`Invalid configuration: ${messages.join('; ')}`);
  }
  return environment;
}
