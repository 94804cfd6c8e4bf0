declare const jsonOf: unique symbol;

/**
 * A response body already serialized (by PostgreSQL), as JSON text of a `T`. Controllers return it
 * with an explicit JSON Content-Type and Express sends the bytes as they are. Branded: a plain
 * string is not a JsonText, so the type of a body is only ever claimed where it is made.
 */
export type JsonText<T> = string & { readonly [jsonOf]: T };

/** Claims that `text` is the JSON of a `T`: for the statements that write the response bodies. */
export function jsonText<T>(text: string): JsonText<T> {
  return text as JsonText<T>;
}

/**
 * A body with the version of the workspace's data it was read with (items/item-sql.ts), in one
 * snapshot: the source of its ETag (conditional-read.guard.ts).
 */
export interface VersionedJson<T> {
  json: JsonText<T>;
  version: string;
}

export function isVersionedJson(value: unknown): value is VersionedJson<unknown> {
  return typeof value === 'object' && value !== null && 'json' in value && 'version' in value;
}
