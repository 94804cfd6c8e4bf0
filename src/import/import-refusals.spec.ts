import { COMPANY_FIELDS, CONTACT_FIELDS } from '../companies/company.fields';
import { LEAD_FIELDS } from '../leads/lead.fields';
import { describeRefusal, type FailedWrite, postgresRefusal } from './import-refusals';

/*
 * The database's refusals of an import's write, as node-postgres and Prisma's driver adapter
 * report them (the shapes below are copied from real errors), each turned into the import's
 * problems: record and field named.
 */

function companies(...names: [id: string, name: string][]): FailedWrite {
  return {
    table: 'companies',
    fields: COMPANY_FIELDS,
    records: names.map(([id, name], index) => ({
      location: `companies[${index}]`,
      id,
      values: { id, name, city: 'Lyon' },
    })),
  };
}

const contacts: FailedWrite = {
  table: 'contacts',
  fields: CONTACT_FIELDS,
  records: [
    {
      location: 'companies[2].contacts[0]',
      id: 'ct_1',
      values: { id: 'ct_1', name: 'Ann', jobTitle: 'CTO', companyId: 'co_9' },
      company: { location: 'companies[2]', id: 'co_9' },
    },
    {
      location: 'companies[2].contacts[1]',
      id: 'ct_2',
      values: { id: 'ct_2', name: 'N'.repeat(900), jobTitle: 'Head of Growth', companyId: 'co_9' },
      company: { location: 'companies[2]', id: 'co_9' },
    },
  ],
};

const leads: FailedWrite = {
  table: 'leads',
  fields: LEAD_FIELDS,
  records: [
    { location: 'leads[0]', id: 'ld_1', values: { id: 'ld_1', companyId: 'co_1' } },
    { location: 'leads[1]', id: 'ld_2', values: { id: 'ld_2', companyId: 'co_gone' } },
  ],
};

/** An error as Prisma throws it for a failed raw statement, around the adapter's cause. */
function prismaError(cause: Record<string, unknown>): unknown {
  return {
    name: 'PrismaClientKnownRequestError',
    code: 'P2010',
    message: 'Invalid `prisma.$executeRawUnsafe()` invocation: Raw query failed.',
    meta: { driverAdapterError: { name: 'DriverAdapterError', cause } },
  };
}

describe('postgresRefusal', () => {
  it("reads the adapter's cause, not Prisma's own P2010", () => {
    const error = prismaError({
      originalCode: '23514',
      originalMessage:
        'new row for relation "companies" violates check constraint "companies_name_length"',
      kind: 'postgres',
      detail: 'Failing row contains (co_9, ws_1, x).',
    });

    expect(postgresRefusal(error)).toEqual({
      code: '23514',
      message: 'new row for relation "companies" violates check constraint "companies_name_length"',
      detail: 'Failing row contains (co_9, ws_1, x).',
      constraint: 'companies_name_length',
      column: undefined,
    });
  });

  it('reads a node-postgres error, and one nested in `cause`', () => {
    const pg = {
      code: '23505',
      message: 'duplicate key value violates unique constraint "companies_pkey"',
      detail: 'Key (id)=(co_1) already exists.',
      constraint: 'companies_pkey',
    };

    expect(postgresRefusal({ cause: pg })).toMatchObject({
      code: '23505',
      constraint: 'companies_pkey',
      detail: 'Key (id)=(co_1) already exists.',
    });
  });

  it('is null for what is not a PostgreSQL error', () => {
    expect(postgresRefusal(new Error('boom'))).toBeNull();
    expect(
      postgresRefusal({ code: 'P2024', message: 'Timed out fetching a connection' }),
    ).toBeNull();
    expect(postgresRefusal(null)).toBeNull();
  });
});

describe('describeRefusal', () => {
  it('23514 on a length constraint: the record by the failing row’s id, the field by the constraint', () => {
    const refusal = postgresRefusal(
      prismaError({
        originalCode: '23514',
        originalMessage:
          'new row for relation "companies" violates check constraint "companies_name_length"',
        kind: 'postgres',
        detail: 'Failing row contains (co_9, ws_1, Acme Analytics International, d, i).',
      }),
    );

    expect(
      describeRefusal(
        refusal!,
        companies(['co_1', 'Fine'], ['co_9', 'Acme Analytics International']),
      ),
    ).toEqual([
      'companies[1] (id co_9): name is longer than the database allows (it has 28): refused by its constraint companies_name_length',
    ]);
  });

  it('23514: an id longer than 64 bytes, shown cut in DETAIL, still names its record', () => {
    const id = `co_${'7'.repeat(90)}`;
    const refusal = {
      code: '23514',
      message: 'new row for relation "companies" violates check constraint "companies_city_length"',
      detail: `Failing row contains (${id.slice(0, 64)}..., ws_1, n).`,
    };

    expect(describeRefusal(postgresRefusal(refusal)!, companies(['co_1', 'a'], [id, 'b']))).toEqual(
      [
        `companies[1] (id ${id}): city is longer than the database allows (it has 4): refused by its constraint companies_city_length`,
      ],
    );
  });

  it('23514 from the contacts trigger: the company, by the JSON of DETAIL', () => {
    const refusal = postgresRefusal(
      prismaError({
        originalCode: '23514',
        originalMessage: 'company co_9 has 11 contacts, more than 10',
        kind: 'postgres',
        detail: '{"workspaceId" : "ws_1", "companyId" : "co_9", "contacts" : 11, "maximum" : 10}',
      }),
    );

    expect(describeRefusal(refusal!, contacts)).toEqual([
      'companies[2] (id co_9): contacts must hold at most 10 contacts: the database counted 11 for the company, refused by its constraint contacts_per_company (another writer added some during the import?)',
    ]);
  });

  it('23514 on another constraint: the record and the constraint', () => {
    const refusal = {
      code: '23514',
      message:
        'new row for relation "companies" violates check constraint "companies_scores_check"',
      detail: 'Failing row contains (co_1, ws_1, n).',
    };

    expect(describeRefusal(postgresRefusal(refusal)!, companies(['co_1', 'a']))).toEqual([
      "companies[0] (id co_1): refused by the database's constraint companies_scores_check",
    ]);
  });

  it('22001, a column narrower than the map: each value too long', () => {
    const refusal = postgresRefusal(
      prismaError({
        originalCode: '22001',
        originalMessage: 'value too long for type character varying(5)',
        kind: 'LengthMismatch',
      }),
    );

    expect(describeRefusal(refusal!, contacts)).toEqual([
      "companies[2].contacts[1] (id ct_2): name is longer than the database's column allows: 900 characters, at most 5",
      "companies[2].contacts[1] (id ct_2): jobTitle is longer than the database's column allows: 14 characters, at most 5",
    ]);
  });

  it.each([
    'index row requires 120104 bytes, maximum size is 8191',
    'index row size 2720 exceeds btree version 4 maximum 2704 for index "contacts_company_order_idx"',
  ])('54000 (%s): the record whose indexed text is that large, and its field', (message) => {
    const big: FailedWrite = {
      ...contacts,
      records: [
        contacts.records[0],
        {
          ...contacts.records[1],
          values: { ...contacts.records[1].values, name: '\u00e9'.repeat(4500) },
        },
      ],
    };
    const refusal = postgresRefusal({ code: '54000', message });

    expect(describeRefusal(refusal!, big)).toEqual([
      `companies[2].contacts[1] (id ct_2): name is too large for the database's index (9000 bytes; ${message})`,
    ]);
  });

  it('23505 with DETAIL (node-postgres): the record whose id it names', () => {
    const refusal = postgresRefusal({
      code: '23505',
      message: 'duplicate key value violates unique constraint "companies_pkey"',
      detail: 'Key (id)=(co_9) already exists.',
      constraint: 'companies_pkey',
    });

    expect(describeRefusal(refusal!, companies(['co_1', 'a'], ['co_9', 'b']))).toEqual([
      "companies[1] (id co_9): id co_9 is already used by another workspace (written during the import): refused by the database's constraint companies_pkey",
    ]);
  });

  it('23505 without DETAIL (the adapter keeps only the index): the ids another workspace holds', () => {
    const refusal = postgresRefusal(
      prismaError({
        originalCode: '23505',
        originalMessage: 'duplicate key value violates unique constraint "companies_pkey"',
        kind: 'UniqueConstraintViolation',
        constraint: { index: 'companies_pkey' },
        table: 'companies',
      }),
    );

    expect(
      describeRefusal(refusal!, companies(['co_1', 'a'], ['co_9', 'b']), {
        takenIds: new Set(['co_1']),
      }),
    ).toEqual([
      "companies[0] (id co_1): id co_1 is already used by another workspace (written during the import): refused by the database's constraint companies_pkey",
    ]);
  });

  it('21000, an id twice in one statement: the second use', () => {
    const refusal = postgresRefusal({
      code: '21000',
      message: 'ON CONFLICT DO UPDATE command cannot affect row a second time',
    });

    expect(describeRefusal(refusal!, companies(['co_1', 'a'], ['co_1', 'b']))).toEqual([
      'companies[1] (id co_1): id co_1 is already used by companies[0]',
    ]);
  });

  it('23503, a company deleted during the import: the leads that point to it', () => {
    const refusal = postgresRefusal(
      prismaError({
        originalCode: '23503',
        originalMessage:
          'insert or update on table "leads" violates foreign key constraint "leads_company_id_workspace_id_fkey"',
        kind: 'ForeignKeyConstraintViolation',
        constraint: { index: 'leads_company_id_workspace_id_fkey' },
      }),
    );

    expect(describeRefusal(refusal!, leads, { missingCompanyIds: new Set(['co_gone']) })).toEqual([
      "leads[1] (id ld_2): companyId co_gone is no longer a company of the workspace (deleted during the import?): refused by the database's leads_company_id_workspace_id_fkey",
    ]);
  });

  it('22P05, a database whose encoding lacks a character: every field that holds it', () => {
    const write = companies(['co_1', 'Plain'], ['co_2', 'Caf\u00e9 \u20ac']);
    const refusal = postgresRefusal(
      prismaError({
        originalCode: '22P05',
        originalMessage:
          'character with byte sequence 0xe2 0x82 0xac in encoding "UTF8" has no equivalent in encoding "LATIN1"',
        kind: 'postgres',
      }),
    );

    expect(describeRefusal(refusal!, write)).toEqual([
      'companies[1] (id co_2): name holds U+20AC, which the database cannot store: character with byte sequence 0xe2 0x82 0xac in encoding "UTF8" has no equivalent in encoding "LATIN1"',
    ]);
  });

  it('22021, NUL or bytes that are not UTF-8: every field that holds them', () => {
    const nul = postgresRefusal({
      code: '22021',
      message: 'invalid byte sequence for encoding "UTF8": 0x00',
    });

    expect(describeRefusal(nul!, companies(['co_1', 'a\u0000b'], ['co_2', 'b']))).toEqual([
      'companies[0] (id co_1): name holds U+0000, which the database cannot store: invalid byte sequence for encoding "UTF8": 0x00',
    ]);
  });

  it('any other refusal: the statement’s records and the database’s words, the field if given', () => {
    const refusal = postgresRefusal({
      code: '23502',
      message: 'null value in column "city" of relation "companies" violates not-null constraint',
      column: 'city',
    });

    expect(
      describeRefusal(refusal!, companies(['co_1', 'a'], ['co_2', 'b'], ['co_3', 'c'])),
    ).toEqual([
      'companies[0] to companies[2]: refused by the database (city): null value in column "city" of relation "companies" violates not-null constraint (SQLSTATE 23502)',
    ]);
    expect(describeRefusal(refusal!, companies(['co_1', 'a']))).toEqual([
      'companies[0] (id co_1): refused by the database (city): null value in column "city" of relation "companies" violates not-null constraint (SQLSTATE 23502)',
    ]);
  });
});
