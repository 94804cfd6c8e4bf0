// The decorators below read design-time types: loaded by db:migrate and the entrypoint before Nest.
import 'reflect-metadata';
import { plainToInstance, Transform, Type } from 'class-transformer';
import {
  IsBoolean,
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
// The largest of the limits below: the rate-limit headers state them as int32
// (http/api-responses.decorator.ts).
export const INT32_MAX = 2_147_483_647;

export const EXAMPLE_API_KEY_SECRET = 'change-me-to-a-long-random-secret-of-32-or-more-chars';

const WEBHOOK_SECRET_KEY_FORMAT = /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/;

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
  @Max(INT32_MAX)
  RATE_LIMIT_PER_MINUTE = 120;

  // Requests of one workspace (all its keys) in progress at once on each instance; one more is
  // refused with 429 (src/rate-limit/in-flight.guard.ts). 20 is Stripe's concurrency limit.
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT32_MAX)
  MAX_IN_FLIGHT_PER_WORKSPACE = 20;

  // The longest a statement should wait for a database connection in the fair queue; past it the
  // backlog is shed with 503, the workspaces with the most in flight first
  // (src/database/fair-queue.ts).
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  QUEUE_DEADLINE_MS = 5_000;

  // How long the change feeds keep deletion records (prune-changes removes older ones); a cursor
  // that points before a removed one is answered 410.
  @Type(() => Number)
  @IsInt()
  @Min(1)
  CHANGES_RETENTION_DAYS = 30;

  // How long visits are kept and readable: reads never return a visit that started before, the
  // import refuses one, and `prune-visits` drops the months wholly before it (its partitions).
  // 395 days: thirteen months, for a year-on-year view.
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(36_500)
  VISIT_RETENTION_DAYS = 395;

  // A change stream ends by itself, normally and with its cursor, after this long (the client
  // goes on with another request): load balancers' idle and request timeouts and deploys then
  // never cut one (src/changes/stream/change-streams.ts).
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3_600)
  CHANGE_STREAM_MAX_SECONDS = 300;

  // A change stream whose reader takes nothing for this long is ended (its connection closed).
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(600)
  CHANGE_STREAM_STALL_SECONDS = 30;

  // Change streams of one workspace running at once on each instance (one more: 429), and of all
  // workspaces (one more: 503).
  @Type(() => Number)
  @IsInt()
  @Min(1)
  MAX_CHANGE_STREAMS_PER_WORKSPACE = 2;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  MAX_CHANGE_STREAMS = 8;

  // Requests that fail authentication, per client address.
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INT32_MAX)
  AUTH_FAILURE_LIMIT_PER_MINUTE = 300;

  // pino's levels; `silent` writes nothing (the tests' default).
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL: LevelWithSilent = 'info';

  // The store of both rate limits, shared by every instance. Unset: each process counts on its
  // own, which holds for a single instance only.
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  // The browser origins whose requests POST /mcp serves (docs/agents.md), comma-separated, each
  // `scheme://host[:port]` exactly as browsers send it. Unset: none; a request without `Origin`
  // (agents run server-side) is always served, one with another origin is refused with 403.
  @IsOptional()
  @Matches(/^(?:https?:\/\/[^\s,/]+)(?:,https?:\/\/[^\s,/]+)*$/, {
    message:
      'MCP_ALLOWED_ORIGINS must be a comma-separated list of origins such as https://app.example.com',
  })
  MCP_ALLOWED_ORIGINS?: string;

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

  // The key that encrypts webhook signing secrets at rest (AES-256-GCM): 32 bytes as 64 hex digits
  // or base64. Needed by the worker and the `webhook` admin commands only (requireWebhookSecretKey).
  @IsOptional()
  @Matches(WEBHOOK_SECRET_KEY_FORMAT, {
    message: 'WEBHOOK_SECRET_KEY must be 32 bytes as 64 hex digits or 44 characters of base64',
  })
  WEBHOOK_SECRET_KEY?: string;

  // Plain http:// endpoint URLs; https:// only otherwise.
  @Transform(({ value }) => booleanText(value))
  @IsBoolean({ message: 'WEBHOOK_ALLOW_HTTP must be true or false' })
  WEBHOOK_ALLOW_HTTP = false;

  // Test-only: lets webhooks reach loopback and private addresses (receivers on 127.0.0.1).
  // Refused in production without WEBHOOK_ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION=i-understand.
  @Transform(({ value }) => booleanText(value))
  @IsBoolean({ message: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS must be true or false' })
  WEBHOOK_ALLOW_PRIVATE_NETWORKS = false;

  @IsOptional()
  @IsString()
  WEBHOOK_ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION?: string;

  // How long a webhook attempt may take, lookup to response: the spec's 15 s, at most. Tests
  // shorten it, which also shortens the lease after which a killed worker's attempt is redone.
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(15_000)
  WEBHOOK_TIMEOUT_MS = 15_000;
}

/** The confirmation that lets WEBHOOK_ALLOW_PRIVATE_NETWORKS through in production. */
export const PRIVATE_NETWORKS_CONFIRMATION = 'i-understand';

function booleanText(value: unknown): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

/** WEBHOOK_SECRET_KEY's 32 bytes, or a StartupError for the commands that cannot work without it. */
export function requireWebhookSecretKey(environment: Environment): Buffer {
  const text = environment.WEBHOOK_SECRET_KEY;
  if (text === undefined || text === '') {
    throw new StartupError(
      'WEBHOOK_SECRET_KEY is required for webhooks (32 random bytes as 64 hex digits, e.g. `openssl rand -hex 32`)',
    );
  }
  return Buffer.from(text, text.length === 64 ? 'hex' : 'base64');
}

// The variables without a default, and what to set them to. Unset (or empty), each is said to be
// required, rather than malformed ("must be a postgresql:// connection URL") or in several words.
const REQUIRED: Record<string, string> = {
  DATABASE_URL: 'DATABASE_URL is required (the postgresql:// URL of the database)',
  API_KEY_SECRET: 'API_KEY_SECRET is required (a secret of at least 32 characters)',
};

/**
 * The URL the migrations run on (`npm run db:migrate` and the container's entrypoint):
 * DATABASE_MIGRATION_URL, else DATABASE_URL, checked as the server checks them, so that a missing
 * or malformed one is the same one-line error naming the variable rather than the driver's
 * `getaddrinfo ENOTFOUND` for what it made of the text.
 */
export function migrationDatabaseUrl(raw: Record<string, unknown>): string {
  const given = (name: string) => raw[name] !== undefined && raw[name] !== '';
  const checked = ['DATABASE_MIGRATION_URL', 'DATABASE_URL'].filter(given);
  if (checked.length === 0) {
    throw new StartupError(
      `Invalid configuration: ${REQUIRED.DATABASE_URL} (or DATABASE_MIGRATION_URL, for the migrations alone)`,
    );
  }
  const environment = plainToInstance(Environment, raw, { exposeDefaultValues: true });
  const messages = validateSync(environment)
    .filter((error) => checked.includes(error.property))
    .flatMap((error) => Object.values(error.constraints ?? {}));
  if (messages.length > 0) {
    throw new StartupError(`Invalid configuration: ${messages.join('; ')}`);
  }
  return environment.DATABASE_MIGRATION_URL || environment.DATABASE_URL;
}

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
  if (
    environment.NODE_ENV === 'production' &&
    environment.WEBHOOK_ALLOW_PRIVATE_NETWORKS &&
    environment.WEBHOOK_ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION !== PRIVATE_NETWORKS_CONFIRMATION
  ) {
    messages.push(
      `WEBHOOK_ALLOW_PRIVATE_NETWORKS is for tests: in production it also needs WEBHOOK_ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION=${PRIVATE_NETWORKS_CONFIRMATION}`,
    );
  }
  if (messages.length > 0) {
    throw new StartupError(`Invalid configuration: ${messages.join('; ')}`);
  }
  return environment;
}
