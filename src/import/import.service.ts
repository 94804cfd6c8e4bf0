import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';
import { type Field, storedColumns } from '../items/fields';
import { COMPANY_FIELDS, CONTACT_FIELDS } from '../companies/company.fields';
import { LEAD_FIELDS } from '../leads/lead.fields';
import {
  type CheckedFile,
  checkImportFile,
  type CompanyRecord,
  type ContactRecord,
  describeProblems,
  type Entry,
  type LeadRecord,
} from './import-file';
import {
  type AfterTheFact,
  describeRefusal,
  type FailedWrite,
  FOREIGN_KEY_VIOLATION,
  postgresRefusal,
  STRING_TOO_LONG,
  UNIQUE_VIOLATION,
} from './import-refusals';

export interface ImportCounts {
  companies: number;
  contacts: number;
  leads: number;
}

/** Refused input: nothing was written; `problems` has one line per bad record. */
export class ImportRefusedException extends BadRequestException {
  constructor(readonly problems: string[]) {
    const records = problems.length === 1 ? '1 record is' : `${problems.length} records are`;
    super([`import refused, nothing was written: ${records} invalid`, ...problems].join('\n  '));
  }
}

type Transaction = Prisma.TransactionClient;

/** A record to write, with where it is in the file (to name it if the database refuses it). */
interface Located<Row> {
  location: string;
  row: Row;
  /** A contact's company. */
  company?: { location: string; id: string };
}

/** A statement of the writes that the database refused: what it wrote, and the error. */
class WriteRefused extends Error {
  constructor(
    readonly write: FailedWrite,
    readonly error: unknown,
  ) {
    super('the database refused a write of the import');
  }
}

// Rows per INSERT: each statement sends one array per column (`unnest`), so a batch is a handful
// of parameters whatever its size; the batch size only bounds the statement's duration and memory.
const BATCH_SIZE = 5_000;
// One transaction for the whole file. Prisma's default (5 s) is too short for the largest files, and
// so is the pool's statement_timeout (5 s, for the API's requests): raised for this transaction.
const TRANSACTION_TIMEOUT_MS = 5 * 60_000;

/**
 * Loads companies (with their contacts) and leads into a workspace, in the API's own shapes:
 * upserted by id, all or nothing.
 */
@Injectable()
export class ImportService {
  constructor(private readonly prisma: PrismaService) {}

  async import(workspaceId: string, input: unknown): Promise<ImportCounts> {
    const file = checkImportFile(input);
    try {
      return await this.prisma.$transaction(
        async (tx) => {
          const workspace = await tx.workspace.findUnique({
            where: { id: workspaceId },
            select: { id: true },
          });
          if (!workspace) throw new NotFoundException(`workspace ${workspaceId} does not exist`);
          await checkAgainstDatabase(tx, workspaceId, file);
          const problems = describeProblems(file);
          if (problems.length > 0) throw new ImportRefusedException(problems);

          const companies = file.companies.map((entry) => located<CompanyRecord>(entry));
          const leads = file.leads.map((entry) => located<LeadRecord>(entry));
          await tx.$executeRaw`SET LOCAL statement_timeout = '2min'`;
          for (const batch of batches(companies)) await upsertCompanies(tx, workspaceId, batch);
          const contacts = await replaceContacts(tx, workspaceId, file);
          for (const batch of batches(leads)) await upsertLeads(tx, workspaceId, batch);
          return { companies: companies.length, contacts, leads: leads.length };
        },
        { timeout: TRANSACTION_TIMEOUT_MS, maxWait: 10_000 },
      );
    } catch (error) {
      if (!(error instanceof WriteRefused)) throw error;
      const refusal = postgresRefusal(error.error);
      if (!refusal) throw error.error;
      // The transaction is over (rolled back): what the refusal needs from the database now.
      const inFile = new Set(file.companies.flatMap((company) => company.id ?? []));
      const after = await this.afterTheFact(workspaceId, refusal.code, error.write, inFile);
      throw new ImportRefusedException(describeRefusal(refusal, error.write, after));
    }
  }

  /**
   * For a unique violation, the ids of the refused statement that another workspace holds; for
   * a foreign key, the companies it points to that the workspace no longer has (both can only
   * have changed during the import, which checked them first); for a string too long, the
   * table's columns of a bounded type.
   */
  private async afterTheFact(
    workspaceId: string,
    code: string,
    write: FailedWrite,
    companiesInFile: ReadonlySet<string>,
  ): Promise<AfterTheFact> {
    if (code === UNIQUE_VIOLATION) {
      const ids = write.records.map((record) => record.id);
      const taken = await this.prisma.$queryRaw<{ id: string }[]>`
        SELECT id FROM ${Prisma.raw(`"${write.table}"`)}
        WHERE id = ANY(${ids}::text[]) AND workspace_id <> ${workspaceId}`;
      return { takenIds: new Set(taken.map((row) => row.id)) };
    }
    if (code === STRING_TOO_LONG) {
      const columns = await this.prisma.$queryRaw<{ column: string; bound: number }[]>`
        SELECT column_name AS column, character_maximum_length AS bound
        FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ${write.table}
          AND character_maximum_length IS NOT NULL`;
      return { boundedColumns: new Map(columns.map(({ column, bound }) => [column, bound])) };
    }
    if (code === FOREIGN_KEY_VIOLATION) {
      // A company of the file was written by the same transaction: never the missing one.
      const companyIds = [
        ...new Set(write.records.map((record) => String(record.values.companyId))),
      ].filter((id) => !companiesInFile.has(id));
      const present = await this.prisma.$queryRaw<{ id: string }[]>`
        SELECT id FROM companies WHERE workspace_id = ${workspaceId} AND id = ANY(${companyIds}::text[])`;
      const found = new Set(present.map((row) => row.id));
      return { missingCompanyIds: new Set(companyIds.filter((id) => !found.has(id))) };
    }
    return {};
  }
}

function located<Row>(entry: Entry<unknown>): Located<Row> {
  return { location: entry.location, row: entry.value as Row };
}

/**
 * What only the database knows, added to the entries' problems: ids owned by another workspace,
 * and leads whose company is neither in the file nor stored in the workspace, or misnamed.
 */
async function checkAgainstDatabase(
  tx: Transaction,
  workspaceId: string,
  file: CheckedFile,
): Promise<void> {
  const contacts = file.companies.flatMap((company) => company.contacts);
  for (const [table, entries] of [
    ['companies', file.companies],
    ['contacts', contacts],
    ['leads', file.leads],
  ] as const) {
    const ids = entries.flatMap((entry) => (entry.id === null ? [] : [entry.id]));
    if (ids.length === 0) continue;
    const taken = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM ${Prisma.raw(`"${table}"`)}
      WHERE id = ANY(${ids}::text[]) AND workspace_id <> ${workspaceId}`;
    const takenIds = new Set(taken.map((row) => row.id));
    for (const entry of entries) {
      if (entry.id !== null && takenIds.has(entry.id)) {
        entry.problems.push(`id ${entry.id} belongs to another workspace`);
        entry.value = null;
      }
    }
  }

  const namesInFile = new Map<string, string | null>();
  for (const company of file.companies) {
    if (company.id !== null && !namesInFile.has(company.id)) {
      namesInFile.set(company.id, company.name);
    }
  }
  const storedIds = [
    ...new Set(
      file.leads.flatMap((lead) =>
        lead.companyId === null || namesInFile.has(lead.companyId) ? [] : [lead.companyId],
      ),
    ),
  ];
  const stored =
    storedIds.length === 0
      ? []
      : await tx.$queryRaw<{ id: string; name: string }[]>`
          SELECT id, name FROM companies
          WHERE workspace_id = ${workspaceId} AND id = ANY(${storedIds}::text[])`;
  const storedNames = new Map(stored.map((row) => [row.id, row.name]));

  for (const lead of file.leads) {
    if (lead.companyId === null) continue;
    const name = namesInFile.has(lead.companyId)
      ? namesInFile.get(lead.companyId)
      : storedNames.get(lead.companyId);
    let problem: string | null = null;
    if (name === undefined) {
      problem = `companyId ${lead.companyId} is not a company of workspace ${workspaceId}`;
    } else if (name !== null && lead.companyName !== null && lead.companyName !== name) {
      problem = `companyName must be ${JSON.stringify(name)}, the name of company ${lead.companyId}`;
    }
    if (problem) {
      lead.problems.push(problem);
      lead.value = null;
    }
  }
}

/*
 * The writes: one INSERT ... SELECT FROM unnest(...) per batch, arrays bound as parameters, the
 * columns and their types taken from the item's field map (items/fields.ts).
 * Dates are bound as Date objects, not as ISO strings: the driver adapter then converts them
 * exactly as it does every other date Prisma writes and reads, so that they come back unchanged.
 * `ON CONFLICT ... WHERE` never takes over a row of another workspace: such an id was refused
 * above, and if one appeared since, the row count below no longer matches and everything rolls back.
 * An upsert that rewrites identical values changes nothing the change feeds see.
 * A statement the database refuses (import-refusals.ts) is named by record and field once the
 * transaction has rolled back, like the checks' problems.
 */
interface Column<Row> {
  column: string;
  arrayType: string;
  cast: string;
  value: (row: Row) => unknown;
}

function columnsOf<Row extends object>(fields: Record<string, Field>): Column<Row>[] {
  return storedColumns(fields).map(({ name, ...column }) => ({
    ...column,
    value: (row: Row) => (row as Record<string, unknown>)[name],
  }));
}

async function upsert<Row extends { id: string }>(
  tx: Transaction,
  table: FailedWrite['table'],
  fields: Record<string, Field>,
  columns: Column<Row>[],
  workspaceId: string,
  records: Located<Row>[],
): Promise<void> {
  const names = columns.map(({ column }) => column);
  const rows = records.map(({ row }) => row);
  const write: FailedWrite = {
    table,
    fields,
    records: records.map(({ location, row, company }) => ({
      location,
      id: row.id,
      values: row,
      company,
    })),
  };
  const written = await tx
    .$executeRawUnsafe(
      `INSERT INTO ${table} (workspace_id, ${names.join(', ')})
    SELECT $1, ${columns.map(({ column, cast }) => `${column}${cast}`).join(', ')}
    FROM unnest(${columns.map(({ arrayType }, i) => `$${i + 2}::${arrayType}`).join(', ')})
      AS row (${names.join(', ')})
    ON CONFLICT (id) DO UPDATE SET
      ${names
        .filter((name) => name !== 'id')
        .map((name) => `${name} = EXCLUDED.${name}`)
        .join(', ')}
    WHERE ${table}.workspace_id = EXCLUDED.workspace_id`,
      workspaceId,
      ...columns.map(({ value }) => rows.map(value)),
    )
    .catch((error: unknown) => {
      // Named by record and field once the transaction is over (ImportService.import).
      throw new WriteRefused(write, error);
    });
  assertAllWritten(write, written);
}

const COMPANY_COLUMNS = columnsOf<CompanyRecord>(COMPANY_FIELDS);
const LEAD_COLUMNS = columnsOf<LeadRecord>(LEAD_FIELDS);
type ContactRow = ContactRecord & { companyId: string };
const CONTACT_COLUMNS: Column<ContactRow>[] = [
  ...columnsOf<ContactRow>(CONTACT_FIELDS),
  { column: 'company_id', arrayType: 'text[]', cast: '', value: (row) => row.companyId },
];

function upsertCompanies(
  tx: Transaction,
  workspaceId: string,
  companies: Located<CompanyRecord>[],
): Promise<void> {
  return upsert(tx, 'companies', COMPANY_FIELDS, COMPANY_COLUMNS, workspaceId, companies);
}

/**
 * A company's contacts become exactly the file's: the imported companies' contacts that the file
 * does not list go, the others are upserted by id (a contact may move to another company). Not a
 * delete of all and an insert: rewriting identical rows is what lets a re-import of unchanged data
 * emit no change in the feeds (the triggers compare each row with what it was).
 */
async function replaceContacts(
  tx: Transaction,
  workspaceId: string,
  file: CheckedFile,
): Promise<number> {
  const companyIds = file.companies.map((company) => (company.value as CompanyRecord).id);
  const contacts: Located<ContactRow>[] = file.companies.flatMap((company) =>
    company.contacts.map((contact) => ({
      location: contact.location,
      row: { ...(contact.value as ContactRecord), companyId: (company.value as CompanyRecord).id },
      company: { location: company.location, id: (company.value as CompanyRecord).id },
    })),
  );
  await tx.$executeRaw`
    DELETE FROM contacts
    WHERE workspace_id = ${workspaceId}
      AND company_id = ANY(${companyIds}::text[])
      AND NOT id = ANY(${contacts.map((c) => c.row.id)}::text[])`;
  for (const batch of batches(contacts)) {
    await upsert(tx, 'contacts', CONTACT_FIELDS, CONTACT_COLUMNS, workspaceId, batch);
  }
  return contacts.length;
}

function upsertLeads(
  tx: Transaction,
  workspaceId: string,
  leads: Located<LeadRecord>[],
): Promise<void> {
  return upsert(tx, 'leads', LEAD_FIELDS, LEAD_COLUMNS, workspaceId, leads);
}

/**
 * Every row written: an id that another workspace took since checkAgainstDatabase looked is left
 * alone by `ON CONFLICT ... WHERE`, and the whole import refused, naming it (afterTheFact).
 */
function assertAllWritten(write: FailedWrite, written: number): void {
  if (written !== write.records.length) {
    throw new WriteRefused(write, {
      code: UNIQUE_VIOLATION,
      message: `${write.records.length - written} ${write.table} ids are held by another workspace`,
    });
  }
}

function batches<T>(rows: T[]): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < rows.length; start += BATCH_SIZE) {
    result.push(rows.slice(start, start + BATCH_SIZE));
  }
  return result;
}
