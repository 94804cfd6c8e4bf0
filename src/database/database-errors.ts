// What an unreachable, restarting or overloaded PostgreSQL looks like by the time it reaches us:
// Prisma's error codes, the kinds of @prisma/adapter-pg's driver errors, PostgreSQL's SQLSTATEs
// and Node's socket errors, possibly nested in `cause`.
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);
// query_canceled (statement_timeout), admin_shutdown, crash_shutdown, cannot_connect_now,
// too_many_connections, and the whole connection-exception class 08.
const SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '53300']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE']);
// The wording of node-postgres for a pool that cannot get a connection in time or lost one, and
// of Prisma for a transaction whose connection broke, or (P2028) that outlived its 5 s timeout (a
// statement stuck as long as statement_timeout: whichever fires first) or could not start in time.
const DRIVER_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|on an expired transaction|Unable to start a transaction in the given time/i;
const MAX_DEPTH = 6;
// What a statement that could not get a connection in time throws: shed by the fair queue
// (OverloadedError: the backlog would not drain within its deadline, or it waited that long),
// refused at once by a pool queue's bound (PoolSaturatedError), or node-postgres's timeout while
// waiting in a pool's queue.
const SHED_CODES = new Set(['OVERLOADED', 'POOL_SATURATED']);
const POOL_WAIT_TIMEOUT = /^timeout exceeded when trying to connect$/i;

/** `Retry-After` of a 503: the pool saturated (a burst, over in about a second), or the database. */
export const RETRY_AFTER_SATURATED_SECONDS = 1;
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

/** True when an error means "the database is unavailable right now", worth a 503 not a 500. */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > MAX_DEPTH) return false;
  const { code, kind, originalCode, message, cause, name, meta } = error as Record<string, unknown>;
  if (name === 'PrismaClientInitializationError') return true;
  if (typeof code === 'string' && SHED_CODES.has(code)) return true;
  if (typeof code === 'string' && (PRISMA_CODES.has(code) || isConnectionCode(code))) return true;
  if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) return true;
  if (typeof originalCode === 'string' && isConnectionCode(originalCode)) return true;
  if (typeof message === 'string' && DRIVER_MESSAGES.test(message)) return true;
  // Prisma keeps the driver's error in meta.driverAdapterError (e.g. P2039 for a query that
  // statement_timeout cancelled), other libraries in cause.
  const driverError = (meta as { driverAdapterError?: unknown } | undefined)?.driverAdapterError;
  return isDatabaseUnavailable(cause, depth + 1) || isDatabaseUnavailable(driverError, depth + 1);
}

/**
 * True when a statement was refused because the service is overloaded (the fair queue shed it,
 * every connection was busy and too many waited, or it waited CONNECTION_WAIT_MS for one): load
 * to shed, not a database that is down.
 */
export function isPoolSaturated(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, message } = error as Record<string, unknown>;
  return (
    (typeof code === 'string' && SHED_CODES.has(code)) ||
    (typeof message === 'string' && POOL_WAIT_TIMEOUT.test(message))
  );
}

/** The `Retry-After` of the 503 that a database error gets, in whole seconds. */
export function retryAfterSeconds(error: unknown): number {
  return isPoolSaturated(error) ? RETRY_AFTER_SATURATED_SECONDS : RETRY_AFTER_UNAVAILABLE_SECONDS;
}

function isConnectionCode(code: string): boolean {
  return SQLSTATES.has(code) || SOCKET_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

// undefined_table: a relation the statement names does not exist.
const UNDEFINED_TABLE = '42P01';

/**
 * True when an error says that a table does not exist (PostgreSQL's 42P01 undefined_table, Prisma's
 * P2021, the adapter's TableDoesNotExist): this service's tables are missing, so the database has
 * not been migrated, or not fully.
 */
export function isUndefinedTable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > MAX_DEPTH) return false;
  const { code, kind, originalCode, cause, meta } = error as Record<string, unknown>;
  if (code === 'P2021' || code === UNDEFINED_TABLE || originalCode === UNDEFINED_TABLE) return true;
  if (kind === 'TableDoesNotExist') return true;
  const driverError = (meta as { driverAdapterError?: unknown } | undefined)?.driverAdapterError;
  return isUndefinedTable(cause, depth + 1) || isUndefinedTable(driverError, depth + 1);
}

/**
 * The one sentence the admin tool and the server's start say of a database without this service's
 * tables, naming the missing ones when only some are.
 */
export function notMigrated(someMissing: string[] = []): string {
  const which = someMissing.length > 0 ? ` (tables missing: ${someMissing.join(', ')})` : '';
  return (
    `the database of DATABASE_URL is not migrated${which}: ` +
    'run `npm run db:migrate` (after `npm run build`), then try again'
  );
}

// invalid_catalog_name: the database that the URL names does not exist on the server.
const UNDEFINED_DATABASE = '3D000';
// PgBouncer (1.18, measured) relays that refusal with its own code, protocol_violation, and the
// server's message.
const PROTOCOL_VIOLATION = '08P01';
const NO_SUCH_DATABASE = /^database ".*" does not exist$/;

/**
 * True when the URL's server answered, but has no database of the URL's name: node-postgres's
 * SQLSTATE (directly, or through PgBouncer), or Prisma's P1003 (whose driver error says the same).
 */
export function isMissingDatabase(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === UNDEFINED_DATABASE ||
    code === 'P1003' ||
    (code === PROTOCOL_VIOLATION && typeof message === 'string' && NO_SUCH_DATABASE.test(message))
  );
}

/**
 * One sentence for a database that does not exist: which URL (`variable`, from `source`), and the
 * `createdb` command that makes it; `otherwise` adds another way on.
 */
export function missingDatabase(
  url: string,
  { variable, source, otherwise }: { variable: string; source: string; otherwise?: string },
): string {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.slice(1));
  return (
    `${variable} (from ${source}) names the database "${name}", which does not exist on ` +
    `${parsed.host}: create it (\`createdb -h ${parsed.hostname} -p ${parsed.port || 5432} ` +
    `-U ${decodeURIComponent(parsed.username) || 'postgres'} ${name}\`)` +
    (otherwise ? `, or ${otherwise}` : '')
  );
}
