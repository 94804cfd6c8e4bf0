/*
 * Reads an OTLP/HTTP trace export as the service sends it (protobuf, `application/x-protobuf`):
 * an ExportTraceServiceRequest (opentelemetry-proto, collector/trace/v1), decoded by its field
 * numbers into the spans' fields the tests read, in the shape of OTLP's JSON encoding.
 */

export interface ExportedSpan {
  traceId: string;
  spanId: string;
  /** '' for a trace's root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: { key: string; value: AnyValue }[];
  status: { code: number; message: string };
  /** The instrumentation scope's name, and the resource's `service.name`. */
  scope: string;
  service: string;
}

type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { other: true };

type Field = bigint | Buffer;

/** A message's fields by number, each as its varint or its bytes (length-delimited or fixed). */
function fieldsOf(buffer: Buffer): Map<number, Field[]> {
  const fields = new Map<number, Field[]>();
  let offset = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buffer[offset++];
      if (byte === undefined) throw new Error('truncated varint');
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  const bytes = (length: number): Buffer => {
    if (offset + length > buffer.length) throw new Error('truncated field');
    const value = buffer.subarray(offset, offset + length);
    offset += length;
    return value;
  };
  while (offset < buffer.length) {
    const tag = Number(varint());
    const wireType = tag & 7;
    const value =
      wireType === 0
        ? varint()
        : wireType === 1
          ? bytes(8)
          : wireType === 2
            ? bytes(Number(varint()))
            : wireType === 5
              ? bytes(4)
              : undefined;
    if (value === undefined) throw new Error(`wire type ${wireType}`);
    const number = tag >>> 3;
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

const messages = (fields: Map<number, Field[]>, number: number): Map<number, Field[]>[] =>
  (fields.get(number) ?? []).map((field) => fieldsOf(field as Buffer));
const message = (fields: Map<number, Field[]>, number: number) =>
  messages(fields, number)[0] ?? new Map<number, Field[]>();
const text = (fields: Map<number, Field[]>, number: number) =>
  ((fields.get(number)?.[0] as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8');
const hex = (fields: Map<number, Field[]>, number: number) =>
  ((fields.get(number)?.[0] as Buffer | undefined) ?? Buffer.alloc(0)).toString('hex');
const integer = (fields: Map<number, Field[]>, number: number) =>
  Number((fields.get(number)?.[0] as bigint | undefined) ?? 0n);

function anyValue(fields: Map<number, Field[]>): AnyValue {
  if (fields.has(1)) return { stringValue: text(fields, 1) };
  if (fields.has(2)) return { boolValue: integer(fields, 2) === 1 };
  if (fields.has(3)) return { intValue: BigInt.asIntN(64, fields.get(3)![0] as bigint).toString() };
  if (fields.has(4)) return { doubleValue: (fields.get(4)![0] as Buffer).readDoubleLE() };
  return { other: true };
}

const keyValues = (fields: Map<number, Field[]>, number: number) =>
  messages(fields, number).map((pair) => ({
    key: text(pair, 1),
    value: anyValue(message(pair, 2)),
  }));

/** Every span of one export request's body. */
export function decodeTraceExport(body: Buffer): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const resourceSpans of messages(fieldsOf(body), 1)) {
    const resource = keyValues(message(resourceSpans, 1), 1);
    const service = resource.find((pair) => pair.key === 'service.name')?.value;
    for (const scopeSpans of messages(resourceSpans, 2)) {
      const scope = text(message(scopeSpans, 1), 1);
      for (const span of messages(scopeSpans, 2)) {
        const status = message(span, 15);
        spans.push({
          traceId: hex(span, 1),
          spanId: hex(span, 2),
          parentSpanId: hex(span, 4),
          name: text(span, 5),
          kind: integer(span, 6),
          attributes: keyValues(span, 9),
          status: { code: integer(status, 3), message: text(status, 2) },
          scope,
          service: service && 'stringValue' in service ? service.stringValue : '',
        });
      }
    }
  }
  return spans;
}
