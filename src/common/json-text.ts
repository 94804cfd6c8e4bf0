/**
 * A response body already serialized (by PostgreSQL), as JSON text of a `T`. Controllers return it
 * with an explicit JSON Content-Type and Express sends the bytes as they are.
 */
export type JsonText<T> = string & { readonly __jsonOf?: T };
