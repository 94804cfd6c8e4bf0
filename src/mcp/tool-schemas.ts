import type { OpenAPIObject } from '@nestjs/swagger';
import type { Tool } from '@modelcontextprotocol/server';
import type { ToolDefinition } from './tools';

/*
 * The tools' schemas come from the OpenAPI document, the REST contract itself: a tool's input
 * schema is its operation's parameters, its output schema the operation's 200 body. Converted
 * once, at start, from OpenAPI 3.0's dialect to the JSON Schema that MCP clients validate with:
 * `nullable` becomes a `null` type (or value), `$ref`s point into the schema's own `$defs`, and
 * the keywords that are OpenAPI's only (`example`, `discriminator`) are dropped, since a strict
 * JSON Schema validator refuses unknown keywords.
 */

export type JsonSchema = Record<string, unknown>;

const OPENAPI_ONLY = new Set(['example', 'discriminator', 'nullable']);
const COMPONENT = '#/components/schemas/';

/** An OpenAPI schema (and the components it refers to) as one self-contained JSON Schema. */
export function toJsonSchema(schema: unknown, document: OpenAPIObject): JsonSchema {
  const components = (document.components?.schemas ?? {}) as Record<string, unknown>;
  const defs: Record<string, unknown> = {};

  const convert = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(convert);
    if (node === null || typeof node !== 'object') return node;
    const source = node as JsonSchema;
    if (typeof source.$ref === 'string') {
      const name = source.$ref.slice(COMPONENT.length);
      if (!(name in defs)) {
        defs[name] = {}; // Reserved first: a schema that refers to itself ends here.
        defs[name] = convert(components[name]);
      }
      return { $ref: `#/$defs/${name}` };
    }
    const converted: JsonSchema = {};
    for (const [key, value] of Object.entries(source)) {
      if (OPENAPI_ONLY.has(key)) continue;
      // `properties` maps names to schemas: its keys are field names, never keywords.
      converted[key] =
        key === 'properties'
          ? Object.fromEntries(
              Object.entries(value as JsonSchema).map(([name, property]) => [
                name,
                convert(property),
              ]),
            )
          : convert(value);
    }
    return source.nullable === true ? withNull(converted) : converted;
  };

  let root = convert(schema) as JsonSchema;
  // A root that is only a reference is that schema itself: MCP wants `type: "object"` at the root.
  if (typeof root.$ref === 'string' && Object.keys(root).length === 1) {
    root = defs[root.$ref.slice('#/$defs/'.length)] as JsonSchema;
  }
  // A root that is one of several objects (an item whole, or with `fields` selected) says so too.
  const objects = (root.anyOf as JsonSchema[] | undefined)?.every(
    (branch) =>
      typeof branch.$ref === 'string' &&
      (defs[branch.$ref.slice('#/$defs/'.length)] as JsonSchema).type === 'object',
  );
  if (root.type === undefined && objects === true) root = { type: 'object', ...root };
  return Object.keys(defs).length > 0 ? { ...root, $defs: defs } : root;
}

/** A schema that also accepts null. */
function withNull(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') {
    const nullable: JsonSchema = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum)) nullable.enum = [...(schema.enum as unknown[]), null];
    return nullable;
  }
  return { anyOf: [schema, { type: 'null' }] };
}

/** The JSON body of an operation's 200 answer, by its operationId. */
export function okBodySchema(document: OpenAPIObject, operationId: string): JsonSchema {
  const operation = operationById(document, operationId);
  const ok = operation.responses?.['200'] as
    { content?: Record<string, { schema?: unknown }> } | undefined;
  const schema = ok?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${operationId} has no JSON 200 in the OpenAPI document`);
  return toJsonSchema(schema, document);
}

export interface OperationParameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: unknown;
}

/** An operation's path and query parameters (not its headers), by its operationId. */
export function operationParameters(
  document: OpenAPIObject,
  operationId: string,
): OperationParameter[] {
  const parameters = (operationById(document, operationId).parameters ??
    []) as OperationParameter[];
  return parameters.filter((parameter) => parameter.in === 'query' || parameter.in === 'path');
}

interface Operation {
  operationId?: string;
  responses?: Record<string, unknown>;
  parameters?: unknown[];
}

function operationById(document: OpenAPIObject, operationId: string): Operation {
  for (const item of Object.values(document.paths)) {
    const operation = (item as { get?: Operation }).get;
    if (operation?.operationId === operationId) return operation;
  }
  throw new Error(`no GET operation ${operationId} in the OpenAPI document`);
}

/** A tool as tools/list shows it: the operation's words, parameters and 200 body. */
export function listedTool(
  tool: ToolDefinition,
  document: OpenAPIObject,
  parameters: OperationParameter[],
): Tool {
  const { operation } = tool;
  return {
    name: tool.name,
    title: tool.title,
    description: `${operation.summary}. ${operation.description}`,
    inputSchema: inputSchema(tool, parameters),
    outputSchema: okBodySchema(document, operation.operationId),
    annotations: {
      title: tool.title,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      // The tools read this service's data only, not an open world of external sources.
      openWorldHint: false,
    },
  };
}

/** The operation's parameters as one object schema; a page size bounded for agents. */
function inputSchema(tool: ToolDefinition, parameters: OperationParameter[]): Tool['inputSchema'] {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const parameter of parameters) {
    let schema: JsonSchema = { ...(parameter.schema as JsonSchema) };
    delete schema.example;
    if (parameter.description) schema.description = parameter.description;
    if (parameter.name === 'limit' && tool.limit) {
      schema = { ...schema, default: tool.limit.default, maximum: tool.limit.maximum };
      schema.description = `Page size, at most ${tool.limit.maximum} here (REST allows more).`;
    }
    properties[parameter.name] = schema;
    if (parameter.required) required.push(parameter.name);
  }
  return {
    type: 'object',
    properties,
    ...(required.length > 0 && { required }),
    additionalProperties: false,
  } as Tool['inputSchema'];
}
