import { characterCount, type Field } from '../items/fields';

/*
 * What the database may still refuse of an import whose records passed every check of
 * import-file.ts, and how each refusal becomes a sentence naming the record and the field, in the
 * form of the import's own problems (`companies[3] (id co_9): name ...`). With the checks in
 * place these happen only when the database and the field maps disagree (a constraint changed on
 * one side), when another writer changes the workspace during the import, or on a database that
 * is not UTF-8; a refusal of another kind is still named by its table and its records' range.
 */

/** A PostgreSQL error as node-postgres gives it, or as Prisma's driver adapter passes it on. */
export interface PostgresRefusal {
  code: string;
  message: string;
  detail?: string;
  constraint?: string;
  column?: string;
}

/** One record of the statement that failed: where it is in the file, and its columns' values. */
export interface WrittenRecord {
  location: string;
  id: string;
  /** The record's values by API field name (a contact's also has `companyId`). */
  values: Record<string, unknown>;
  /** A contact's company: its place in the file and its id. */
  company?: { location: string; id: string };
}

/** The statement that failed: its table, the field map of its rows, and its rows. */
export interface FailedWrite {
  table: 'companies' | 'contacts' | 'leads';
  fields: Record<string, Field>;
  records: WrittenRecord[];
}

/** What the database says once the transaction is over (import.service.ts looks it up). */
export interface AfterTheFact {
  /** Ids of the failed statement's records that another workspace holds (unique violations). */
  takenIds?: ReadonlySet<string>;
  /** Company ids the failed statement's records point to that the workspace no longer has. */
  missingCompanyIds?: ReadonlySet<string>;
  /** The table's columns of a bounded type (`varchar(n)`), and their bound (string too long). */
  boundedColumns?: ReadonlyMap<string, number>;
}

// Error codes (SQLSTATE) the import can still meet.
export const CHECK_VIOLATION = '23514';
export const STRING_TOO_LONG = '22001';
export const PROGRAM_LIMIT_EXCEEDED = '54000';
export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
export const CARDINALITY_VIOLATION = '21000';
export const UNTRANSLATABLE_CHARACTER = '22P05';
export const CHARACTER_NOT_IN_REPERTOIRE = '22021';

const MAX_DEPTH = 6;

/**
 * The PostgreSQL error behind `error`: node-postgres's own (code, detail, constraint...), or the
 * cause that Prisma's driver adapter keeps in `meta.driverAdapterError` (originalCode and
 * originalMessage always; detail for the errors it does not classify), possibly nested in `cause`.
 */
export function postgresRefusal(error: unknown, depth = 0): PostgresRefusal | null {
  if (!error || typeof error !== 'object' || depth > MAX_DEPTH) return null;
  const record = error as Record<string, unknown>;
  const meta = record.meta as { driverAdapterError?: { cause?: unknown } } | undefined;
  const inner =
    postgresRefusal(meta?.driverAdapterError?.cause, depth + 1) ??
    postgresRefusal(meta?.driverAdapterError, depth + 1);
  if (inner) return inner;
  const code = text(record.originalCode) ?? text(record.code);
  const message = text(record.originalMessage) ?? text(record.message);
  // A SQLSTATE: five digits or capitals; not one of Prisma's own codes (P1000 to P6999).
  if (code && /^[0-9A-Z]{5}$/.test(code) && !/^P[1-9]/.test(code) && message) {
    const constraint = record.constraint;
    return {
      code,
      message,
      detail: text(record.detail),
      constraint:
        text(constraint) ??
        text((constraint as { index?: unknown } | undefined)?.index) ??
        /constraint "([^"]+)"/.exec(message)?.[1],
      column: text(record.column),
    };
  }
  return postgresRefusal(record.cause, depth + 1);
}

/**
 * The import's problems for a refusal: one line per record the database refused, naming the
 * field when the refusal says which; the failed statement's records as a whole when it does not.
 */
export function describeRefusal(
  refusal: PostgresRefusal,
  write: FailedWrite,
  after: AfterTheFact = {},
): string[] {
  const lines = specificProblems(refusal, write, after);
  if (lines.length > 0) return lines;
  // Unknown, or no record found: the statement's records, and the database's own words.
  const first = write.records[0];
  const last = write.records.at(-1);
  const where =
    first === undefined || last === undefined
      ? write.table
      : first === last
        ? `${first.location} (id ${first.id})`
        : `${first.location} to ${last.location}`;
  const field = refusal.column ? ` (${fieldName(write, refusal.column)})` : '';
  return [
    `${where}: refused by the database${field}: ${refusal.message} (SQLSTATE ${refusal.code})`,
  ];
}

function specificProblems(
  refusal: PostgresRefusal,
  write: FailedWrite,
  after: AfterTheFact,
): string[] {
  switch (refusal.code) {
    case CHECK_VIOLATION:
      return checkViolation(refusal, write);
    case STRING_TOO_LONG:
      return stringTooLong(refusal, write, after);
    case PROGRAM_LIMIT_EXCEEDED:
      return indexRowTooLarge(refusal, write);
    case UNIQUE_VIOLATION:
      return uniqueViolation(refusal, write, after);
    case CARDINALITY_VIOLATION:
      return idsTwiceInOneStatement(write);
    case FOREIGN_KEY_VIOLATION:
      return missingCompany(refusal, write, after);
    case UNTRANSLATABLE_CHARACTER:
    case CHARACTER_NOT_IN_REPERTOIRE:
      return unstorableCharacter(refusal, write);
    default:
      return [];
  }
}

/**
 * A CHECK constraint: a length bound (`<table>_<column>_length`) the maps do not share, a score
 * constraint, or the contacts trigger (`contacts_per_company`, its company in DETAIL as JSON).
 * The failing row comes in DETAIL (`Failing row contains (id, ...)`), the id first, each value cut
 * to 64 bytes.
 */
function checkViolation(refusal: PostgresRefusal, write: FailedWrite): string[] {
  const perCompany = parseJson(refusal.detail) as {
    companyId?: unknown;
    contacts?: unknown;
    maximum?: unknown;
  } | null;
  if (typeof perCompany?.companyId === 'string') {
    const company = write.records.find(
      (record) => record.company?.id === perCompany.companyId,
    )?.company;
    const where = company
      ? `${company.location} (id ${company.id})`
      : `company ${perCompany.companyId}`;
    return [
      `${where}: contacts must hold at most ${String(perCompany.maximum)} contacts: the database counted ${String(perCompany.contacts)} for the company, refused by its constraint contacts_per_company (another writer added some during the import?)`,
    ];
  }
  const records = failingRows(refusal.detail, write);
  const constraint = refusal.constraint ?? 'a check constraint';
  const column = lengthConstraintColumn(constraint, write.table);
  if (column !== null) {
    const field = fieldName(write, column);
    return records.map((record) => {
      const value = record.values[field];
      const length = typeof value === 'string' ? ` (it has ${characterCount(value)})` : '';
      return `${named(record)}: ${field} is longer than the database allows${length}: refused by its constraint ${constraint}`;
    });
  }
  return records.map(
    (record) => `${named(record)}: refused by the database's constraint ${constraint}`,
  );
}

/**
 * A `varchar(n)` column (the tables have none: one changed would say this). The error names
 * neither column nor row: the records with a value over `n` in a column of that bound
 * (after.boundedColumns), or in any text field when the columns are not known.
 */
function stringTooLong(
  refusal: PostgresRefusal,
  write: FailedWrite,
  after: AfterTheFact,
): string[] {
  const bound = Number(/\((\d+)\)/.exec(refusal.message)?.[1]);
  if (!Number.isFinite(bound)) return [];
  const columns = after.boundedColumns;
  return write.records.flatMap((record) =>
    textFields(write, record)
      .filter(({ field, value }) => {
        const column = write.fields[field].column;
        return (
          (columns === undefined || columns.get(column) === bound) && characterCount(value) > bound
        );
      })
      .map(
        ({ field, value }) =>
          `${named(record)}: ${field} is longer than the database's column allows: ${characterCount(value)} characters, at most ${bound}`,
      ),
  );
}

/**
 * An index entry over PostgreSQL's limit (`index row requires 120104 bytes, maximum size is
 * 8191`, or `index row size 2720 exceeds btree version 4 maximum 2704 for index "..."`): the
 * records whose indexed text is that large, and their largest indexed field.
 */
function indexRowTooLarge(refusal: PostgresRefusal, write: FailedWrite): string[] {
  const sizes = /(?:requires|size) (\d+).*?maximum(?: size is)? (\d+)/.exec(refusal.message);
  const maximum = Number(sizes?.[2] ?? 2704);
  const indexed = INDEXED_TEXT[write.table];
  return write.records.flatMap((record) => {
    const values = indexed.map((field) => ({ field, bytes: utf8Bytes(record.values[field]) }));
    if (values.reduce((sum, { bytes }) => sum + bytes, 0) <= maximum) return [];
    const largest = values.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    return [
      `${named(record)}: ${largest.field} is too large for the database's index (${largest.bytes} bytes; ${refusal.message})`,
    ];
  });
}

// The text fields of each table that an index holds (migrations 20261122000000_init and
// 20261123000000_list_totals): a B-tree entry holds at most about 2,700 bytes.
const INDEXED_TEXT: Record<FailedWrite['table'], string[]> = {
  companies: ['id'],
  contacts: ['id', 'companyId', 'name'],
  leads: ['id', 'companyId'],
};

/**
 * An id already used by another workspace: written since the import checked (after.takenIds; the
 * upsert then leaves it alone, and import.service.ts counts the rows), or named by a unique
 * violation's DETAIL (`Key (id)=(co_9) already exists.`).
 */
function uniqueViolation(
  refusal: PostgresRefusal,
  write: FailedWrite,
  after: AfterTheFact,
): string[] {
  const keyed = /Key \((.+)\)=\((.*)\) already exists/.exec(refusal.detail ?? '');
  const by = refusal.constraint
    ? `: refused by the database's constraint ${refusal.constraint}`
    : '';
  return write.records
    .filter((record) =>
      keyed ? keyed[1] === 'id' && keyed[2] === record.id : after.takenIds?.has(record.id),
    )
    .map(
      (record) =>
        `${named(record)}: id ${record.id} is already used by another workspace (written during the import)${by}`,
    );
}

/** `ON CONFLICT DO UPDATE command cannot affect row a second time`: an id twice in a statement. */
function idsTwiceInOneStatement(write: FailedWrite): string[] {
  const first = new Map<string, WrittenRecord>();
  return write.records.flatMap((record) => {
    const earlier = first.get(record.id);
    if (earlier === undefined) {
      first.set(record.id, record);
      return [];
    }
    return [`${named(record)}: id ${record.id} is already used by ${earlier.location}`];
  });
}

/** A lead's or contact's company that the workspace no longer has (deleted during the import). */
function missingCompany(
  refusal: PostgresRefusal,
  write: FailedWrite,
  after: AfterTheFact,
): string[] {
  if (!/company/.test(refusal.constraint ?? refusal.message)) return [];
  return write.records
    .filter((record) => after.missingCompanyIds?.has(String(record.values.companyId)))
    .map(
      (record) =>
        `${named(record)}: companyId ${String(record.values.companyId)} is no longer a company of the workspace (deleted during the import?): refused by the database's ${refusal.constraint ?? 'foreign key'}`,
    );
}

/**
 * A character the database cannot store: one the database's encoding lacks (22P05, a database
 * that is not UTF8: `character with byte sequence 0xe2 0x82 0xac in encoding "UTF8" has no
 * equivalent in encoding "LATIN1"`), or bytes that are not UTF-8 (22021; NUL is `0x00`).
 */
function unstorableCharacter(refusal: PostgresRefusal, write: FailedWrite): string[] {
  const bytes = /sequence(?: for encoding "[^"]+")?:? ((?:0x[0-9a-f]{2} ?)+)/i
    .exec(refusal.message)?.[1]
    .trim()
    .split(' ')
    .map((byte) => Number.parseInt(byte, 16));
  if (!bytes) return [];
  const decoded = Buffer.from(bytes).toString('utf8');
  const character = decoded.includes('\uFFFD') ? null : [...decoded][0];
  return write.records.flatMap((record) =>
    textFields(write, record)
      .filter(({ value }) =>
        character === null ? !value.isWellFormed() : value.includes(character),
      )
      .map(({ field }) => {
        const what =
          character === null
            ? 'bytes that are not UTF-8'
            : `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
        return `${named(record)}: ${field} holds ${what}, which the database cannot store: ${refusal.message}`;
      }),
  );
}

/** The records a `Failing row contains (id, ...)` detail names: by the id, cut to 64 bytes. */
function failingRows(detail: string | undefined, write: FailedWrite): WrittenRecord[] {
  const shown = /^Failing row contains \((.*)\)\.?$/s.exec(detail ?? '')?.[1];
  if (shown === undefined) return [];
  const cut = shown.match(/^(.*?)\.\.\.(, |$)/);
  return write.records.filter((record) => {
    if (shown.startsWith(`${record.id}, `) || shown === record.id) return true;
    // A value longer than 64 bytes is shown cut, followed by `...`.
    return (
      cut !== null &&
      Buffer.byteLength(cut[1]) <= 64 &&
      record.id.startsWith(cut[1]) &&
      record.id !== cut[1]
    );
  });
}

/** `<table>_<column>_length` (migration 20261125000000_field_bounds): its column. */
function lengthConstraintColumn(constraint: string, table: string): string | null {
  const match = new RegExp(`^${table}_(\\w+)_length$`).exec(constraint);
  return match ? match[1] : null;
}

/** The API's name of a column of the failed statement's table. */
function fieldName(write: FailedWrite, column: string): string {
  if (column === 'company_id') return 'companyId';
  const found = Object.entries(write.fields).find(([, field]) => field.column === column);
  return found ? found[0] : column;
}

function textFields(write: FailedWrite, record: WrittenRecord): { field: string; value: string }[] {
  return Object.entries(write.fields).flatMap(([field, { kind }]) => {
    const value = record.values[field];
    return (kind === 'text' || kind === 'nullableText') && typeof value === 'string'
      ? [{ field, value }]
      : [];
  });
}

function named(record: WrittenRecord): string {
  return `${record.location} (id ${record.id})`;
}

function utf8Bytes(value: unknown): number {
  return typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function parseJson(value: string | undefined): unknown {
  if (value === undefined || !value.startsWith('{')) return null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}
