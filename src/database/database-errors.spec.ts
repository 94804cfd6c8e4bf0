import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';
import { PoolSaturatedError } from './queryable';
import {
  isDatabaseUnavailable,
  isMissingDatabase,
  isPoolSaturated,
  isUndefinedTable,
  notMigrated,
  retryAfterSeconds,
} from './database-errors';

function withProperties(properties: Record<string, unknown>, message = 'failed'): Error {
  return Object.assign(new Error(message), properties);
}

describe('isDatabaseUnavailable', () => {
  it.each([
    ['Prisma initialization error', { name: 'PrismaClientInitializationError' }],
    ["P1001 can't reach database server", { code: 'P1001' }],
    ['P1002 database server timed out', { code: 'P1002' }],
    ['P1008 operations timed out', { code: 'P1008' }],
    ['P1017 server closed the connection', { code: 'P1017' }],
    ['P2024 timed out fetching a connection from the pool', { code: 'P2024' }],
    ['P2037 too many database connections', { code: 'P2037' }],
    ['adapter DatabaseNotReachable', { kind: 'DatabaseNotReachable' }],
    ['adapter ConnectionClosed', { kind: 'ConnectionClosed' }],
    ['adapter SocketTimeout', { kind: 'SocketTimeout' }],
    ['adapter TooManyConnections', { kind: 'TooManyConnections' }],
    ['SQLSTATE 57014 query_canceled (statement_timeout)', { code: '57014' }],
    ['SQLSTATE 57P01 admin_shutdown', { code: '57P01' }],
    ['SQLSTATE 57P02 crash_shutdown', { code: '57P02' }],
    ['SQLSTATE 57P03 cannot_connect_now', { code: '57P03' }],
    ['SQLSTATE 53300 too_many_connections', { code: '53300' }],
    ['SQLSTATE 08000 connection_exception', { code: '08000' }],
    ['SQLSTATE 08006 connection_failure', { code: '08006' }],
    ['SQLSTATE 08P01 protocol_violation (class 08)', { code: '08P01' }],
    ['adapter error carrying a SQLSTATE as originalCode', { originalCode: '57P01' }],
    ['adapter error carrying class 08 as originalCode', { originalCode: '08003' }],
    ['socket ECONNREFUSED', { code: 'ECONNREFUSED' }],
    ['socket ECONNRESET', { code: 'ECONNRESET' }],
    ['socket ETIMEDOUT', { code: 'ETIMEDOUT' }],
    ['socket ENOTFOUND', { code: 'ENOTFOUND' }],
    ['socket EPIPE', { code: 'EPIPE' }],
  ])('recognises %s', (_case, properties) => {
    expect(isDatabaseUnavailable(withProperties(properties))).toBe(true);
    // The same shape as a plain object, as adapters sometimes throw.
    expect(isDatabaseUnavailable({ ...properties })).toBe(true);
  });

  it.each([
    ['pool timeout', 'timeout exceeded when trying to connect'],
    ['lost connection', 'Connection terminated unexpectedly'],
    ['lost connection, other case', 'connection terminated due to connection timeout'],
    [
      'transaction expired (P2028)',
      'Transaction API error: A rollback cannot be executed on an expired transaction. The timeout for this transaction was 5000 ms, however 5008 ms passed since the start of the transaction.',
    ],
    [
      'transaction not started in time (P2028)',
      'Transaction API error: Unable to start a transaction in the given time.',
    ],
  ])("recognises node-postgres's %s message", (_case, message) => {
    expect(isDatabaseUnavailable(new Error(message))).toBe(true);
  });

  it.each([
    ['a nested cause', { cause: { kind: 'DatabaseNotReachable' } }],
    ['an Error as cause', { cause: withProperties({ code: 'ECONNREFUSED' }) }],
    ['a cause of a cause', { cause: { cause: { code: '57P01' } } }],
    [
      'a cause three levels down',
      { cause: new Error('a', { cause: new Error('b', { cause: { code: 'P1001' } }) }) },
    ],
  ])('looks into %s', (_case, properties) => {
    expect(isDatabaseUnavailable(withProperties(properties))).toBe(true);
  });

  it.each([
    ['an ordinary Error', new Error('secret SQL detail')],
    ['a TypeError', new TypeError('x is undefined')],
    ['a unique constraint failure (P2002)', withProperties({ code: 'P2002' })],
    ['a record not found (P2025)', withProperties({ code: 'P2025' })],
    ['a unique violation SQLSTATE', withProperties({ code: '23505' })],
    ['a syntax error SQLSTATE', withProperties({ code: '42601' })],
    ['an undefined table originalCode', withProperties({ originalCode: '42P01' })],
    ['another adapter kind', withProperties({ kind: 'UniqueConstraintViolation' })],
    ['a numeric code', withProperties({ code: 57014 })],
    ['an error merely mentioning a connection', new Error('connection string is missing')],
    ['an ordinary cause', new Error('outer', { cause: new Error('inner') })],
    ['a string', 'ECONNREFUSED'],
    ['a number', 503],
    ['null', null],
    ['undefined', undefined],
    ['an empty object', {}],
  ])('does not take %s for an unavailable database', (_case, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  // Shapes captured from @prisma/client 7.10 with @prisma/adapter-pg against a real PostgreSQL
  // (see test/e2e/http/errors.e2e-spec.ts, where the same failures reach the API).
  it.each([
    [
      'a model query cancelled by statement_timeout (P2039, the SQLSTATE in meta)',
      Object.assign(
        new Error(
          'Database error. Code: `57014`. Message: `canceling statement due to statement timeout`',
        ),
        {
          name: 'PrismaClientKnownRequestError',
          code: 'P2039',
          clientVersion: '7.10.1',
          meta: {
            modelName: 'Company',
            driverAdapterError: Object.assign(
              new Error('canceling statement due to statement timeout'),
              {
                name: 'DriverAdapterError',
                cause: {
                  originalCode: '57014',
                  originalMessage: 'canceling statement due to statement timeout',
                  kind: 'postgres',
                  code: '57014',
                  severity: 'ERROR',
                  message: 'canceling statement due to statement timeout',
                },
              },
            ),
          },
        },
      ),
    ],
    [
      'a transaction whose connection was lost mid-query',
      Object.assign(new Error('Client has encountered a connection error and is not queryable'), {
        clientVersion: '7.10.1',
      }),
    ],
  ])('recognises %s', (_case, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('ends on a cause that points back to itself', () => {
    const error = new Error('loop') as Error & { cause: unknown };
    error.cause = error;
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('recognises what Prisma with @prisma/adapter-pg throws when the server refuses connections', async () => {
    // Port 1 on the loopback: nothing listens there, the connection is refused at once.
    const prisma = new PrismaClient({
      adapter: new PrismaPg({ connectionString: 'postgresql://postgres@127.0.0.1:1/unreachable' }),
    });
    try {
      const error: unknown = await prisma.workspace.findUnique({ where: { id: 'x' } }).then(
        () => new Error('the query unexpectedly succeeded'),
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(Error);
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await prisma.$disconnect();
    }
  });
});

describe('isPoolSaturated and retryAfterSeconds', () => {
  it.each([
    ['a statement refused because the queue is full', new PoolSaturatedError(100)],
    [
      "node-postgres's wait for a connection timing out",
      new Error('timeout exceeded when trying to connect'),
    ],
  ])('%s: a 503 to retry after 1 s', (_case, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(isPoolSaturated(error)).toBe(true);
    expect(retryAfterSeconds(error)).toBe(1);
  });

  it.each([
    ['a connection refused', withProperties({ code: 'ECONNREFUSED' })],
    [
      'a new connection that did not open in time',
      new Error('Connection terminated due to connection timeout'),
    ],
    ['a statement past statement_timeout', withProperties({ code: '57014' })],
    ['a server shutting down', withProperties({ code: '57P01' })],
  ])('%s: a 503 to retry after 5 s', (_case, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(isPoolSaturated(error)).toBe(false);
    expect(retryAfterSeconds(error)).toBe(5);
  });
});

describe('isUndefinedTable', () => {
  // Shapes captured from @prisma/client 7.10 with @prisma/adapter-pg, and from pg, against an
  // empty database (test/e2e/admin/admin.e2e-spec.ts runs the admin tool on one).
  const adapterCause = (table: string) => ({
    name: 'DriverAdapterError',
    cause: {
      originalCode: '42P01',
      originalMessage: `relation "${table}" does not exist`,
      kind: 'TableDoesNotExist',
      table,
    },
  });

  it.each([
    [
      'a model query (P2021)',
      withProperties(
        {
          name: 'PrismaClientKnownRequestError',
          code: 'P2021',
          meta: { modelName: 'Workspace', driverAdapterError: adapterCause('public.workspaces') },
        },
        'The table `public.workspaces` does not exist in the current database.',
      ),
    ],
    [
      'a raw query (P2010, the SQLSTATE in meta)',
      withProperties(
        {
          name: 'PrismaClientKnownRequestError',
          code: 'P2010',
          meta: { driverAdapterError: adapterCause('workspaces') },
        },
        'Raw query failed. Code: `42P01`. Message: `relation "workspaces" does not exist`',
      ),
    ],
    [
      'a statement on the pool (pg)',
      withProperties({ code: '42P01' }, 'relation "x" does not exist'),
    ],
    ['an undefined table as a cause', new Error('outer', { cause: { originalCode: '42P01' } })],
  ])('recognises %s', (_case, error) => {
    expect(isUndefinedTable(error)).toBe(true);
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it.each([
    ['an unreachable database', withProperties({ code: 'ECONNREFUSED' })],
    ['an undefined column', withProperties({ code: '42703' })],
    ['a unique violation', withProperties({ code: 'P2002' })],
    ['an ordinary Error', new Error('relation')],
    ['null', null],
  ])('does not take %s for missing tables', (_case, error) => {
    expect(isUndefinedTable(error)).toBe(false);
  });

  it('says, in one sentence, to run the migrations; naming the tables when only some miss', () => {
    expect(notMigrated()).toBe(
      'the database of DATABASE_URL is not migrated: run `npm run db:migrate` (after `npm run build`), then try again',
    );
    expect(notMigrated(['lead_changes', 'change_horizons'])).toBe(
      'the database of DATABASE_URL is not migrated (tables missing: lead_changes, change_horizons): ' +
        'run `npm run db:migrate` (after `npm run build`), then try again',
    );
  });
});

describe('isMissingDatabase', () => {
  it.each([
    ['PostgreSQL: invalid_catalog_name', { code: '3D000' }, 'database "x" does not exist'],
    ['Prisma: P1003', { code: 'P1003' }, 'Database `x` does not exist'],
    // What PgBouncer 1.18 sends for the server's refusal (seen by the npm-scripts test in CI).
    ['PgBouncer: protocol_violation', { code: '08P01' }, 'database "x" does not exist'],
  ])('recognises %s', (_, properties, message) => {
    expect(isMissingDatabase(withProperties(properties, message))).toBe(true);
  });

  it.each([
    ['another protocol violation', { code: '08P01' }, 'no more connections allowed'],
    ['a connection refused', { code: 'ECONNREFUSED' }, 'connect ECONNREFUSED'],
    ['a missing table', { code: '42P01' }, 'relation "x" does not exist'],
  ])('not %s', (_, properties, message) => {
    expect(isMissingDatabase(withProperties(properties, message))).toBe(false);
  });
});
