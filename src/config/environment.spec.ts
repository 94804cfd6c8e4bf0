import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  EXAMPLE_API_KEY_SECRET,
  migrationDatabaseUrl,
  requireWebhookSecretKey,
  validateEnvironment,
} from './environment';

const VALID = {
  DATABASE_URL: 'postgresql://app:password@db.internal:5432/visitors',
  API_KEY_SECRET: 'a-real-secret-of-more-than-thirty-two-characters',
};

function errorOf(raw: Record<string, unknown>): string {
  try {
    validateEnvironment(raw);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('validateEnvironment accepted the environment');
}

describe('validateEnvironment', () => {
  it('gives the defaults for what is not set', () => {
    const environment = validateEnvironment({ ...VALID });
    expect(environment.PORT).toBe(3000);
    expect(environment.RATE_LIMIT_PER_MINUTE).toBe(120);
    expect(environment.AUTH_FAILURE_LIMIT_PER_MINUTE).toBe(300);
    expect(environment.MAX_IN_FLIGHT_PER_WORKSPACE).toBe(20);
    expect(environment.QUEUE_DEADLINE_MS).toBe(5000);
    expect(environment.NODE_ENV).toBe('development');
    expect(environment.DATABASE_URL).toBe(VALID.DATABASE_URL);
    expect(environment.API_KEY_SECRET).toBe(VALID.API_KEY_SECRET);
  });

  it('reads one read replica URL or several, and the lag bound (5 s by default)', () => {
    const replicas = 'postgresql://r1:5432/db,postgres://r2/db';
    expect(validateEnvironment({ ...VALID }).READ_REPLICA_MAX_LAG_MS).toBe(5000);
    expect(validateEnvironment({ ...VALID }).DATABASE_READ_URL).toBeUndefined();
    expect(validateEnvironment({ ...VALID, DATABASE_READ_URL: replicas }).DATABASE_READ_URL).toBe(
      replicas,
    );
  });

  it('reads numbers given as strings, as the environment gives them', () => {
    const environment = validateEnvironment({
      ...VALID,
      PORT: '8080',
      RATE_LIMIT_PER_MINUTE: '30',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '5',
    });
    expect(environment.PORT).toBe(8080);
    expect(environment.RATE_LIMIT_PER_MINUTE).toBe(30);
    expect(environment.AUTH_FAILURE_LIMIT_PER_MINUTE).toBe(5);
  });

  it.each(['postgresql://u:p@localhost:5432/db', 'postgres://localhost/db'])(
    'accepts the database URL %s',
    (url) => {
      expect(validateEnvironment({ ...VALID, DATABASE_URL: url }).DATABASE_URL).toBe(url);
    },
  );

  it.each([
    ['DATABASE_URL', { API_KEY_SECRET: VALID.API_KEY_SECRET }],
    ['DATABASE_URL', { ...VALID, DATABASE_URL: '' }],
    ['DATABASE_URL', { ...VALID, DATABASE_URL: 'mysql://localhost/db' }],
    ['DATABASE_URL', { ...VALID, DATABASE_URL: 'localhost:5432' }],
    ['API_KEY_SECRET', { DATABASE_URL: VALID.DATABASE_URL }],
    ['API_KEY_SECRET', { ...VALID, API_KEY_SECRET: '' }],
    ['API_KEY_SECRET', { ...VALID, API_KEY_SECRET: 'too-short' }],
    ['API_KEY_SECRET', { ...VALID, API_KEY_SECRET: 'x'.repeat(31) }],
    ['PORT', { ...VALID, PORT: 'abc' }],
    ['PORT', { ...VALID, PORT: '70000' }],
    ['PORT', { ...VALID, PORT: '65536' }],
    ['PORT', { ...VALID, PORT: '-1' }],
    ['PORT', { ...VALID, PORT: '3000.5' }],
    ['RATE_LIMIT_PER_MINUTE', { ...VALID, RATE_LIMIT_PER_MINUTE: '0' }],
    ['RATE_LIMIT_PER_MINUTE', { ...VALID, RATE_LIMIT_PER_MINUTE: 'lots' }],
    ['RATE_LIMIT_PER_MINUTE', { ...VALID, RATE_LIMIT_PER_MINUTE: '1.5' }],
    ['AUTH_FAILURE_LIMIT_PER_MINUTE', { ...VALID, AUTH_FAILURE_LIMIT_PER_MINUTE: '0' }],
    ['NODE_ENV', { ...VALID, NODE_ENV: 'staging' }],
    ['METRICS_PORT', { ...VALID, METRICS_PORT: 'metrics' }],
    ['METRICS_PORT', { ...VALID, METRICS_PORT: '0' }],
    ['METRICS_PORT', { ...VALID, METRICS_PORT: '65536' }],
    ['METRICS_PORT', { ...VALID, METRICS_PORT: '3000' }],
    ['METRICS_PORT', { ...VALID, PORT: '8080', METRICS_PORT: '8080' }],
    ['DATABASE_READ_URL', { ...VALID, DATABASE_READ_URL: 'postgresql://a/db,mysql://b/db' }],
    ['DATABASE_READ_URL', { ...VALID, DATABASE_READ_URL: 'postgresql://a/db, postgresql://b/db' }],
    ['READ_REPLICA_MAX_LAG_MS', { ...VALID, READ_REPLICA_MAX_LAG_MS: '0' }],
    ['MAX_IN_FLIGHT_PER_WORKSPACE', { ...VALID, MAX_IN_FLIGHT_PER_WORKSPACE: '0' }],
    ['MAX_IN_FLIGHT_PER_WORKSPACE', { ...VALID, MAX_IN_FLIGHT_PER_WORKSPACE: 'many' }],
    ['QUEUE_DEADLINE_MS', { ...VALID, QUEUE_DEADLINE_MS: '50' }],
    ['QUEUE_DEADLINE_MS', { ...VALID, QUEUE_DEADLINE_MS: '600000' }],
    ['DATABASE_MIGRATION_URL', { ...VALID, DATABASE_MIGRATION_URL: 'localhost:5432' }],
    ['DATABASE_POOLER', { ...VALID, DATABASE_POOLER: 'pgpool' }],
  ])('refuses a missing or bad %s, naming it', (name, raw) => {
    expect(errorOf(raw)).toMatch(new RegExp(`^Invalid configuration: .*\\b${name}\\b`));
  });

  it('names every missing variable at once', () => {
    const message = errorOf({});
    expect(message).toContain('DATABASE_URL');
    expect(message).toContain('API_KEY_SECRET');
  });

  it.each([
    ['DATABASE_URL', 'DATABASE_URL is required (the postgresql:// URL of the database)'],
    ['API_KEY_SECRET', 'API_KEY_SECRET is required (a secret of at least 32 characters)'],
  ])('says that %s is required when it is unset or empty, and nothing else of it', (name, said) => {
    for (const value of [undefined, '']) {
      const raw: Record<string, unknown> = { ...VALID, [name]: value };
      if (value === undefined) delete raw[name];
      expect(errorOf(raw)).toBe(`Invalid configuration: ${said}`);
    }
  });

  it('says of both required variables that they are required, in one message', () => {
    expect(errorOf({})).toBe(
      'Invalid configuration: DATABASE_URL is required (the postgresql:// URL of the database); ' +
        'API_KEY_SECRET is required (a secret of at least 32 characters)',
    );
  });

  it('still says what is wrong with a required variable that is set', () => {
    expect(errorOf({ ...VALID, DATABASE_URL: 'mysql://localhost/db' })).toBe(
      'Invalid configuration: DATABASE_URL must be a postgresql:// connection URL',
    );
    expect(errorOf({ ...VALID, API_KEY_SECRET: 'too-short' })).toBe(
      'Invalid configuration: API_KEY_SECRET must be at least 32 characters long',
    );
  });

  it('does not echo the secret in its message', () => {
    const message = errorOf({ API_KEY_SECRET: 'short-secret-value' });
    expect(message).not.toContain('short-secret-value');
  });

  it('refuses the example secret in production', () => {
    expect(
      errorOf({ ...VALID, NODE_ENV: 'production', API_KEY_SECRET: EXAMPLE_API_KEY_SECRET }),
    ).toContain('API_KEY_SECRET');
  });

  it.each(['development', 'test'])('accepts the example secret in %s', (nodeEnv) => {
    const environment = validateEnvironment({
      ...VALID,
      NODE_ENV: nodeEnv,
      API_KEY_SECRET: EXAMPLE_API_KEY_SECRET,
    });
    expect(environment.API_KEY_SECRET).toBe(EXAMPLE_API_KEY_SECRET);
  });

  it('accepts any other long secret in production', () => {
    const environment = validateEnvironment({ ...VALID, NODE_ENV: 'production' });
    expect(environment.NODE_ENV).toBe('production');
  });

  it('knows the example secret that .env.example ships', () => {
    // Were the two to part, the value people copy from .env.example would pass in production.
    const example = readFileSync(join(__dirname, '..', '..', '.env.example'), 'utf8');
    expect(example).toMatch(new RegExp(`^API_KEY_SECRET=${EXAMPLE_API_KEY_SECRET}$`, 'm'));
  });
});

describe('METRICS_PORT', () => {
  it('is unset by default: no metrics', () => {
    expect(validateEnvironment({ ...VALID }).METRICS_PORT).toBeUndefined();
  });

  it('reads a port other than the API port', () => {
    expect(validateEnvironment({ ...VALID, METRICS_PORT: '9464' }).METRICS_PORT).toBe(9464);
  });
});

describe('REDIS_URL', () => {
  it('is unset by default: the rate limits count in-process', () => {
    expect(validateEnvironment({ ...VALID }).REDIS_URL).toBeUndefined();
  });

  it.each(['redis://127.0.0.1:6379', 'rediss://user:secret@cache.internal:6380/2'])(
    'accepts %s',
    (url) => {
      expect(validateEnvironment({ ...VALID, REDIS_URL: url }).REDIS_URL).toBe(url);
    },
  );

  it.each(['', 'redis://', 'http://cache:6379', '127.0.0.1:6379', 'redis://a b'])(
    'refuses %j with a message naming the variable',
    (url) => {
      expect(() => validateEnvironment({ ...VALID, REDIS_URL: url })).toThrow(/REDIS_URL/);
    },
  );
});

describe('webhook settings', () => {
  it('are off by default, and the secret key is required only where used', () => {
    const environment = validateEnvironment({ ...VALID });
    expect(environment.WEBHOOK_ALLOW_HTTP).toBe(false);
    expect(environment.WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(false);
    expect(() => requireWebhookSecretKey(environment)).toThrow(/WEBHOOK_SECRET_KEY is required/);
  });

  it('read the secret key as hex or base64, 32 bytes either way', () => {
    const key = Buffer.alloc(32, 7);
    for (const text of [key.toString('hex'), key.toString('base64')]) {
      const environment = validateEnvironment({ ...VALID, WEBHOOK_SECRET_KEY: text });
      expect(requireWebhookSecretKey(environment)).toEqual(key);
    }
    expect(errorOf({ ...VALID, WEBHOOK_SECRET_KEY: 'ab'.repeat(16) })).toMatch(
      /WEBHOOK_SECRET_KEY must be 32 bytes/,
    );
  });

  it('refuse the private-network escape hatch in production unless confirmed', () => {
    const hatch = { ...VALID, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
    expect(validateEnvironment({ ...hatch, NODE_ENV: 'test' }).WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(
      true,
    );
    expect(errorOf({ ...hatch, NODE_ENV: 'production' })).toMatch(
      /WEBHOOK_ALLOW_PRIVATE_NETWORKS is for tests/,
    );
    const confirmed = validateEnvironment({
      ...hatch,
      NODE_ENV: 'production',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION: 'i-understand',
    });
    expect(confirmed.WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(errorOf({ ...VALID, WEBHOOK_ALLOW_HTTP: 'yes' })).toMatch(
      /WEBHOOK_ALLOW_HTTP must be true or false/,
    );
  });
});

describe('migrationDatabaseUrl (npm run db:migrate, the container entrypoint)', () => {
  const messageOf = (raw: Record<string, string>) => {
    try {
      migrationDatabaseUrl(raw);
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('is DATABASE_MIGRATION_URL when set, else DATABASE_URL; nothing else is required', () => {
    expect(migrationDatabaseUrl({ DATABASE_URL: 'postgresql://a/x' })).toBe('postgresql://a/x');
    expect(
      migrationDatabaseUrl({
        DATABASE_URL: 'postgresql://bouncer/x',
        DATABASE_MIGRATION_URL: 'postgresql://server/x',
      }),
    ).toBe('postgresql://server/x');
  });

  it('names the variable that is missing or malformed, in one line, as the server does', () => {
    expect(messageOf({})).toBe(
      'Invalid configuration: DATABASE_URL is required (the postgresql:// URL of the database) (or DATABASE_MIGRATION_URL, for the migrations alone)',
    );
    expect(messageOf({ DATABASE_URL: 'base' })).toBe(
      'Invalid configuration: DATABASE_URL must be a postgresql:// connection URL',
    );
    expect(
      messageOf({ DATABASE_URL: 'postgresql://a/x', DATABASE_MIGRATION_URL: 'localhost:5432' }),
    ).toBe('Invalid configuration: DATABASE_MIGRATION_URL must be a postgresql:// connection URL');
  });
});
