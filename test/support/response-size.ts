import type { Field } from '../../src/items/fields';

/*
 * The largest response each endpoint can give, in bytes of UTF-8, derived from the field maps:
 * every text field at its maximum length, in the characters that take the most room once written
 * as JSON, every number and date at its longest, and a company with its maximum of contacts.
 * docs/api.md ("Sizes") states these numbers; test/repo/response-size.spec.ts checks that it still
 * does.
 *
 * PostgreSQL writes the JSON (row_to_json), which escapes the control characters U+0001 to U+001F
 * other than \b \t \n \f \r as `\u00XX`: 6 bytes for one character, more than the 4 bytes of the
 * largest UTF-8 character. The import and the database accept those characters (only NUL is
 * refused), so the bound counts 6 bytes per character. A response held as a JavaScript string
 * weighs at most twice its UTF-8 bytes (2 bytes per UTF-16 unit, and no unit takes less than one
 * byte of UTF-8).
 */

/** The most bytes one character of text takes in the JSON: `\u0001`. */
export const MAX_BYTES_PER_CHARACTER = 6;
// float8 as PostgreSQL writes it with extra_float_digits = 1 (17 significant digits), the longest
// being a tiny positive number: `1.2345678901234567e-308`. Scores are 0 to 100 (CHECK).
const MAX_SCORE_LENGTH = 23;
// A PostgreSQL integer of 0 or more.
const MAX_COUNT_LENGTH = String(2 ** 31 - 1).length;
// `"YYYY-MM-DDTHH:MI:SS.MSSZ"`; the import keeps years to four digits, but another writer can
// store years up to 294276 (timestamptz), which to_char writes with six.
const MAX_DATE_TIME_LENGTH = '"294276-12-31T23:59:59.999Z"'.length;
const NULL_LENGTH = 'null'.length;

/** The most bytes a JSON string of at most `maxLength` characters takes, quotes included. */
export function maxTextBytes(maxLength: number): number {
  return 2 + MAX_BYTES_PER_CHARACTER * maxLength;
}

function maxValueBytes(field: Field): number {
  switch (field.kind) {
    case 'text':
      return maxTextBytes(field.maxLength);
    case 'nullableText':
      return Math.max(NULL_LENGTH, maxTextBytes(field.maxLength));
    case 'score':
      return MAX_SCORE_LENGTH;
    case 'count':
      return MAX_COUNT_LENGTH;
    case 'nullableCount':
      return Math.max(NULL_LENGTH, MAX_COUNT_LENGTH);
    case 'dateTime':
      return MAX_DATE_TIME_LENGTH;
    case 'enum':
      return 2 + Math.max(...field.values.map((value) => value.length));
  }
}

/**
 * A JSON object's largest size: `{"name":value,...}` with every member at its largest. `extra`
 * adds members that are not fields of the map (a company's contacts), by name and largest size.
 */
export function maxObjectBytes(
  fields: Record<string, Field>,
  extra: Record<string, number> = {},
): number {
  const members = [
    ...Object.entries(fields).map(([name, field]) => [name, maxValueBytes(field)] as const),
    ...Object.entries(extra),
  ];
  // `"name":` before each value, a comma between members, the braces.
  return (
    members.reduce((sum, [name, bytes]) => sum + name.length + 3 + bytes, 0) +
    (members.length - 1) +
    2
  );
}

/** A JSON array of `count` elements of at most `elementBytes` each. */
export function maxArrayBytes(count: number, elementBytes: number): number {
  return count === 0 ? 2 : 2 + count * elementBytes + (count - 1);
}

/** A list page (`{"total","limit","offset","data"}`) of at most `limit` items. */
export function maxListPageBytes(limit: number, itemBytes: number): number {
  return maxObjectBytes(
    {},
    {
      // A bigint; offsets up to 2^53 - 1.
      total: String(2n ** 63n - 1n).length,
      limit: String(limit).length,
      offset: String(Number.MAX_SAFE_INTEGER).length,
      data: maxArrayBytes(limit, itemBytes),
    },
  );
}

/**
 * A change feed page (`{"data","nextCursor","hasMore"}`) of at most `limit` changes, each the
 * largest of an upsert (`{"op":"upsert","id","changedAt",<key>:item}`) and a delete, whose data
 * stops once its changes reach `maxDataBytes` (change-feed-sql.ts: the changes before the last
 * weigh less than that, and the last at most one change).
 */
export function maxChangePageBytes(
  limit: number,
  key: string,
  itemBytes: number,
  idMaxLength: number,
  maxDataBytes: number,
): number {
  const upsert = maxObjectBytes(
    {},
    {
      op: '"upsert"'.length,
      id: maxTextBytes(idMaxLength),
      changedAt: MAX_DATE_TIME_LENGTH,
      [key]: itemBytes,
    },
  );
  const changes = Math.min(limit * upsert, maxDataBytes - 1 + upsert);
  // The brackets, and a comma between two changes.
  const data = 2 + changes + (limit - 1);
  return maxObjectBytes(
    {},
    {
      data,
      nextCursor: 2 + maxCursorLength(idMaxLength),
      hasMore: 'false'.length,
    },
  );
}

/**
 * A visit list's page (`{"data","nextCursor","hasMore"}`) of at most `limit` visits, whose data
 * stops once its visits reach `maxDataBytes` (visits.sql.ts); its cursor is base64url of the last
 * visit's `startedAt` (24 characters), a space and its id (at most 4 bytes a character), a dot and
 * 16 bytes of MAC (items/signed-cursors.ts).
 */
export function maxVisitPageBytes(
  limit: number,
  visitBytes: number,
  idMaxLength: number,
  maxDataBytes: number,
): number {
  const base64url = (bytes: number) => Math.ceil((bytes * 4) / 3);
  const cursor = base64url(24 + 1 + 4 * idMaxLength) + 1 + base64url(16);
  const visits = Math.min(limit * visitBytes, maxDataBytes - 1 + visitBytes);
  return maxObjectBytes(
    {},
    { data: 2 + visits + (limit - 1), nextCursor: 2 + cursor, hasMore: 'false'.length },
  );
}

/**
 * A feed's cursor (change-cursor.ts): base64url of `txid:pass:id` (two xid8 of up to 20 digits,
 * the id in UTF-8, at most 4 bytes a character), a dot, and 16 bytes of MAC in base64url.
 */
export function maxCursorLength(idMaxLength: number): number {
  const base64url = (bytes: number) => Math.ceil((bytes * 4) / 3);
  return base64url(20 + 1 + 20 + 1 + 4 * idMaxLength) + 1 + base64url(16);
}
