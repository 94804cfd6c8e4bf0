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
