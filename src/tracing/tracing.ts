import type { NodeSDK } from '@opentelemetry/sdk-node';

/** The traces' `service.name` unless OTEL_SERVICE_NAME says otherwise. */
export type ServiceName = 'visitor-read-api' | 'visitor-read-api-webhook-worker';

// Exporting traces is the point; the service's metrics are Prometheus's and its logs JSON lines.
// The SDK would otherwise also export metrics and logs over OTLP by default.
const SIGNAL_DEFAULTS = { OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' };

let sdk: NodeSDK | undefined;

/** True when the standard variables ask for traces: an OTLP endpoint is set. */
function tracingRequested(environment: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(
    environment.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ||
    environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim(),
  );
}

/**
 * OpenTelemetry's Node SDK with the instrumentations of HTTP (the server and the webhook
 * worker's requests), Express, PostgreSQL (pg) and Redis (ioredis), when an OTLP endpoint is
 * set (OTEL_EXPORTER_OTLP_ENDPOINT, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); otherwise nothing is
 * loaded. The rest is the SDK's standard variables (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_PROTOCOL,
 * OTEL_TRACES_SAMPLER, OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED...). An incoming W3C
 * `traceparent` continues its trace.
 *
 * Called before the modules it instruments are loaded (the entry points import the rest after
 * it): the instrumentations patch them as they load.
 */
export async function startTracing(serviceName: ServiceName): Promise<void> {
  if (sdk !== undefined || !tracingRequested()) return;
  for (const [name, value] of Object.entries(SIGNAL_DEFAULTS)) process.env[name] ??= value;
  // Loaded only now: with tracing off, none of it is in the process.
  const [{ NodeSDK }, http, express, pg, ioredis] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ? undefined : serviceName,
    // The worker's only requests go to customers' receivers, which are not part of our traces:
    // it sends them no `traceparent` (null: no propagator at all). The server continues its
    // callers' traces (W3C trace context, or OTEL_PROPAGATORS).
    ...(serviceName === 'visitor-read-api-webhook-worker' ? { textMapPropagator: null } : {}),
    instrumentations: [
      new http.HttpInstrumentation({
        // Probes and scrapes every few seconds would be most of the traces, and say nothing.
        ignoreIncomingRequestHook: (request) =>
          /^\/(health|metrics)(\/|$|\?)/.test(request.url ?? ''),
      }),
      // The router and the handler; not a span for each of the dozen middleware every request
      // passes through (security headers, compression, ...), whose time the handler's span and
      // the request's own include.
      new express.ExpressInstrumentation({
        ignoreLayersType: [express.ExpressLayerType.MIDDLEWARE],
      }),
      // Statements and commands inside a request or a delivery only: the worker's polling, the
      // replicas' checks and pg-boss's maintenance would each be a trace of their own, every
      // fraction of a second. And no span for taking a connection from the pool or opening one:
      // the statement's span and the fair queue's wait say where that time went (they were 2 of
      // a request's 7 spans in steady state, docs/benchmarks.md, "Tracing").
      new pg.PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new ioredis.IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
}

/** Sends the spans not yet exported (at shutdown): at most the exporter's timeout. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown();
  sdk = undefined;
}
