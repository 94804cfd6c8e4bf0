import {
  type Attributes,
  type Context,
  context,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { Pool } from 'pg';

/*
 * The spans of the server's statements in a traced request: each statement's own, and its wait for
 * a turn at a connection (database.ts's fair queue) when it waited.
 */

// A no-op tracer while tracing is off (src/tracing): then no span is made and nothing is read.
const tracer = trace.getTracer('visitor-read-api');

/** What a statement's span says of its database, made once per pool from its connection string. */
const DATABASES = new WeakMap<Pool, Attributes>();

function databaseOf(pool: Pool): Attributes {
  let attributes = DATABASES.get(pool);
  if (attributes === undefined) {
    const url = new URL(pool.options.connectionString ?? 'postgresql://localhost');
    attributes = {
      'db.system.name': 'postgresql',
      'db.namespace': decodeURIComponent(url.pathname.slice(1)),
      'server.address': url.hostname,
      'server.port': Number(url.port || 5432),
    };
    DATABASES.set(pool, attributes);
  }
  return attributes;
}

/** The statement's command (`SELECT`, `WITH`...), upper-cased: the first word of its text. */
function commandOf(sql: string): string {
  return (/^\s*(\w+)/.exec(sql)?.[1] ?? '').toUpperCase();
}

/**
 * Runs one statement of a traced request with a span of its own: named `pg.query:<COMMAND>
 * <database>`, with the database's attributes and the statement's text (its `$n` placeholders, never
 * the values), in error when the statement fails. A statement outside a traced request (the
 * replicas' checks, a timer's) runs without one.
 *
 * The server's statements all come through here (queryable.ts), so the span is made here rather than
 * by OpenTelemetry's pg instrumentation, which patches every client and pool and binds their
 * callbacks to the context for each statement: with every request traced, that instrumentation cost
 * a `/v1/me` 29 µs of CPU on Node 24 against a target of 40 for the whole trace (docs/benchmarks.md,
 * "Tracing"). The span keeps the instrumentation's name and
 * attributes (its version 0.76, the stable database conventions). The worker, whose statements are
 * pg-boss's, keeps the instrumentation (src/tracing/tracing.ts).
 */
export async function inStatementSpan<T>(
  pool: Pool,
  sql: string,
  run: () => Promise<T>,
): Promise<T> {
  const parent = context.active();
  if (trace.getSpan(parent) === undefined) return run();
  const attributes = databaseOf(pool);
  const span = tracer.startSpan(
    `pg.query:${commandOf(sql)} ${String(attributes['db.namespace'])}`,
    { kind: SpanKind.CLIENT, attributes: { ...attributes, 'db.query.text': sql } },
    parent,
  );
  try {
    return await run();
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * A statement's wait for its turn at a connection, as a span of the request's trace, from when it
 * asked to now, when it had to wait (a seat taken at once adds a span and nothing to read; that
 * span was a third of a `/v1/me`'s, docs/benchmarks.md, "Tracing"); in error when it was shed
 * before its turn.
 */
export function traceWait(
  parent: Context,
  workspaceId: string,
  askedAt: number,
  shed?: Error,
): void {
  if (trace.getSpan(parent) === undefined) return;
  const span = tracer.startSpan(
    'fair queue wait',
    {
      startTime: askedAt,
      attributes: {
        'visitor_api.workspace.id': workspaceId,
        'visitor_api.queue.waited_ms': performance.now() - askedAt,
      },
    },
    parent,
  );
  if (shed) span.setStatus({ code: SpanStatusCode.ERROR, message: shed.message });
  span.end();
}
