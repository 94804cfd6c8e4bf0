import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** The traces' `service.name` unless OTEL_SERVICE_NAME says otherwise. */
export type ServiceName = 'visitor-read-api' | 'visitor-read-api-webhook-worker';

// The one exporter loaded: OTLP over HTTP with protobuf bodies, the protocol's default.
const PROTOCOL = 'http/protobuf';

let provider: NodeTracerProvider | undefined;

/** True when the standard variables ask for traces: an OTLP endpoint is set, the SDK not disabled. */
function tracingRequested(environment: NodeJS.ProcessEnv = process.env): boolean {
  if (environment.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(
    environment.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ||
    environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim(),
  );
}

/** Refuses a protocol other than the exporter's, rather than sending a receiver what it cannot read. */
function checkProtocol(environment: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = environment[name]?.trim();
    if (protocol && protocol !== PROTOCOL) {
      throw new Error(`${name}=${protocol}: traces are exported over ${PROTOCOL} only`);
    }
  }
}

/**
 * OpenTelemetry's trace SDK for Node with a span for each of the server's requests
 * (server-spans.ts) and statements (src/database/statement-spans.ts), the HTTP and PostgreSQL (pg)
 * instrumentations of the webhook worker's requests and statements, exporting over OTLP/HTTP
 * (protobuf) when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); otherwise nothing is loaded. The SDK reads the standard
 * variables of the service's name and resource, the sampler, the batching and the exporter's
 * headers and timeout. An incoming W3C `traceparent` continues its trace.
 *
 * Traces only, and no more than a request's server span, its statements and their waits: the
 * Node SDK with the HTTP, Express and Redis instrumentations (and the metrics and logs SDKs it
 * loads whether they export or not) cost 0.78 of workload (a)'s throughput on Node 24 with the
 * shipped flags, 215 µs of CPU per `/v1/me` and 19 MB of resident memory; the trace SDK with the
 * pg instrumentation 0.89, 74 µs and 4 MB, in the same run; with the server's own statement spans
 * instead, 0.95 and 0.96 of (a), 31 and 25 µs per `/v1/me` (docs/benchmarks.md, "Tracing").
 *
 * Called before the modules it instruments are loaded (the entry points import the rest after
 * it): the worker's instrumentations patch them as they load.
 */
export async function startTracing(serviceName: ServiceName): Promise<void> {
  if (provider !== undefined || !tracingRequested()) return;
  checkProtocol();
  const worker = serviceName === 'visitor-read-api-webhook-worker';
  // Loaded only now: with tracing off, none of it is in the process.
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { defaultResource, detectResources, envDetector, resourceFromAttributes },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/resources'),
  ]);
  provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the environment's detector) win.
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': serviceName }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register({
    // The worker's only requests go to customers' receivers, which are not part of our traces:
    // it sends them no `traceparent` (null: no propagator at all). The server continues its
    // callers' traces (W3C trace context and baggage).
    ...(worker ? { propagator: null } : {}),
  });
  if (worker) await instrumentWorker(provider);
  // The server's requests and statements: spans of its own (server-spans.ts, and the database
  // door's: src/database/statement-spans.ts), no instrumentation.
  else (await import('./server-spans.js')).traceServerRequests(provider.getTracer(serviceName));
}

/**
 * The worker's requests to the receivers (HTTP) and its statements (pg-boss's, on pg), by
 * OpenTelemetry's instrumentations.
 */
async function instrumentWorker(tracerProvider: NodeTracerProvider): Promise<void> {
  const [{ registerInstrumentations }, { HttpInstrumentation }, { PgInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/instrumentation'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
    ]);
  registerInstrumentations({
    tracerProvider,
    instrumentations: [
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true }),
      // Statements inside a delivery only: the polling and pg-boss's maintenance would each be a
      // trace of their own, every fraction of a second. And no span for taking a connection from
      // the pool or opening one: they would be 2 of a request's 7 spans in steady state
      // (docs/benchmarks.md, "Tracing").
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    ],
  });
}

/** Sends the spans not yet exported (at shutdown): at most the exporter's timeout. */
export async function stopTracing(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
}
