import type { OpenAPIObject, SchemaObject } from '@nestjs/swagger';
import { Client } from 'pg';
import {
  COMPANY_FIELDS,
  CONTACT_FIELDS,
  MAX_CONTACTS_PER_COMPANY,
} from '../../../src/companies/company.fields';
import { boundedColumns, type Field } from '../../../src/items/fields';
import { ISO_DATE_TIME_LENGTH } from '../../../src/http/iso-date-time';
import { LEAD_FIELDS } from '../../../src/leads/lead.fields';
import { PAGE_VIEW_FIELDS, VISIT_FIELDS } from '../../../src/visits/visit.fields';
import { buildOpenApiDocument } from '../../../src/openapi/openapi';
import { createTestApp, type TestApp } from '../../support/app';
import { waitForLockWaiter } from '../../support/database';
import { createCompany, createContact, createWorkspace } from '../../support/factories';

/*
 * The bounds of the field maps (src/companies/company.fields.ts, src/leads/lead.fields.ts,
 * src/visits/visit.fields.ts) are
 * stated once and enforced in three places: the import (import-file.spec.ts, import.e2e-spec.ts),
 * the OpenAPI document, and the database, whose constraints must be exactly the maps' so that the
 * two cannot drift (migration 20261125000000_field_bounds).
 */

const MAPS: [table: string, schema: string, fields: Record<string, Field>][] = [
  ['companies', 'CompanyDto', COMPANY_FIELDS],
  ['contacts', 'ContactDto', CONTACT_FIELDS],
  ['leads', 'LeadDto', LEAD_FIELDS],
  ['visits', 'VisitDto', VISIT_FIELDS],
  ['page_views', 'PageViewDto', PAGE_VIEW_FIELDS],
];

let t: TestApp;
let client: Client;

beforeAll(async () => {
  t = await createTestApp();
  client = new Client({ connectionString: t.database.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await t?.close();
});

describe('the database bounds every text column exactly as the field maps do', () => {
  it('one CHECK (char_length(column) <= maxLength) per stored text field, and no other', async () => {
    const { rows } = await client.query<{ table: string; name: string; definition: string }>(
      `SELECT c.conrelid::regclass::text AS table, c.conname AS name,
              pg_get_constraintdef(c.oid) AS definition
         FROM pg_constraint c
        WHERE c.contype = 'c' AND c.conrelid = ANY('{companies,contacts,leads,visits,page_views}'::regclass[])
          AND pg_get_constraintdef(c.oid) LIKE '%char_length%'
        ORDER BY 1, 2`,
    );
    const inDatabase = rows.map(({ table, name, definition }) => {
      const match = /^CHECK \(\(char_length\((\w+)\) <= (\d+)\)\)$/.exec(definition);
      if (!match) throw new Error(`Unexpected constraint ${table}.${name}: ${definition}`);
      return { table, name, column: match[1], maxLength: Number(match[2]) };
    });

    const inMaps = MAPS.flatMap(([table, , fields]) =>
      boundedColumns(fields).map(({ column, maxLength }) => ({
        table,
        name: `${table}_${column}_length`,
        column,
        maxLength,
      })),
    ).sort((a, b) => a.table.localeCompare(b.table) || a.name.localeCompare(b.name));

    expect(inDatabase).toEqual(inMaps);
    // Every text field of every map is bounded, stored or read from another table.
    for (const [, , fields] of MAPS) {
      for (const field of Object.values(fields)) {
        if (field.kind === 'text' || field.kind === 'nullableText') {
          expect(field.maxLength).toBeGreaterThan(0);
        }
      }
    }
  });

  it('refuses a value one character over a bound, counting characters, not bytes', async () => {
    const workspace = await createWorkspace(t.prisma);
    const name = '\u{1f600}'.repeat(COMPANY_FIELDS.name.maxLength);

    await expect(createCompany(t.prisma, workspace.id, { name })).resolves.toMatchObject({ name });
    await expect(createCompany(t.prisma, workspace.id, { name: `${name}x` })).rejects.toThrow(
      /companies_name_length/,
    );
  });

  it(`refuses a company's contact beyond ${MAX_CONTACTS_PER_COMPANY}, added or moved there, whoever writes`, async () => {
    const workspace = await createWorkspace(t.prisma);
    const full = await createCompany(t.prisma, workspace.id);
    const other = await createCompany(t.prisma, workspace.id);
    for (let i = 0; i < MAX_CONTACTS_PER_COMPANY; i++) await createContact(t.prisma, full);
    const elsewhere = await createContact(t.prisma, other);

    const added = client.query(
      `INSERT INTO contacts (id, workspace_id, company_id, name, job_title, seniority)
       VALUES ('ct_one_too_many', $1, $2, 'Extra', 'Extra', 'ic')`,
      [workspace.id, full.id],
    );
    const error = await added.then(
      () => undefined,
      (refusal: { code?: string; constraint?: string; detail?: string }) => refusal,
    );
    expect(error).toMatchObject({ code: '23514', constraint: 'contacts_per_company' });
    expect(JSON.parse(error?.detail ?? '')).toEqual({
      workspaceId: workspace.id,
      companyId: full.id,
      contacts: MAX_CONTACTS_PER_COMPANY + 1,
      maximum: MAX_CONTACTS_PER_COMPANY,
    });
    const moved = client.query('UPDATE contacts SET company_id = $1 WHERE id = $2', [
      full.id,
      elsewhere.id,
    ]);
    await expect(moved).rejects.toMatchObject({
      code: '23514',
      constraint: 'contacts_per_company',
    });

    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM contacts WHERE company_id = $1',
      [full.id],
    );
    expect(rows[0].n).toBe(MAX_CONTACTS_PER_COMPANY);
  });

  it('counts the contacts that concurrent transactions add to the same company', async () => {
    const workspace = await createWorkspace(t.prisma);
    const company = await createCompany(t.prisma, workspace.id);
    const half = Math.ceil((MAX_CONTACTS_PER_COMPANY + 1) / 2);
    const [first, second] = [t.database.url, t.database.url].map(
      (connectionString) => new Client({ connectionString }),
    );
    await Promise.all([first.connect(), second.connect()]);
    try {
      const insert = (db: Client, tag: string) =>
        db.query(
          `INSERT INTO contacts (id, workspace_id, company_id, name, job_title, seniority)
           SELECT 'ct_' || $3 || g, $1, $2, 'Someone', 'Somewhere', 'ic'
           FROM generate_series(1, ${half}) g`,
          [workspace.id, company.id, tag],
        );
      await first.query('BEGIN');
      await insert(first, 'first_');
      await second.query('BEGIN');
      // Waits on the company's row, locked by the first transaction's check.
      const secondInsert = insert(second, 'second_').then(
        () => second.query('COMMIT'),
        async (error: unknown) => {
          await second.query('ROLLBACK');
          throw error;
        },
      );
      await waitForLockWaiter(client);
      await first.query('COMMIT');

      await expect(secondInsert).rejects.toMatchObject({ constraint: 'contacts_per_company' });
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
  });
});

describe('the OpenAPI document states the same bounds', () => {
  let document: OpenAPIObject;

  beforeAll(() => {
    document = buildOpenApiDocument(t.app);
  });

  it.each(MAPS)(
    '%s: each text property has its map’s maxLength, each date-time 24 characters',
    (_table, schemaName, fields) => {
      const schema = document.components?.schemas?.[schemaName] as SchemaObject;
      const stated = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([name, property]) => [
          name,
          (property as SchemaObject).maxLength,
        ]),
      );
      const expected = Object.fromEntries(
        Object.entries(fields).map(([name, field]) => [
          name,
          field.kind === 'text' || field.kind === 'nullableText'
            ? field.maxLength
            : field.kind === 'dateTime'
              ? ISO_DATE_TIME_LENGTH
              : undefined,
        ]),
      );
      if (schemaName === 'CompanyDto') expected.contacts = undefined;

      expect(stated).toEqual(expected);
    },
  );

  it(`a company's contacts: at most ${MAX_CONTACTS_PER_COMPANY}`, () => {
    const company = document.components?.schemas?.CompanyDto as SchemaObject;
    expect((company.properties?.contacts as SchemaObject).maxItems).toBe(MAX_CONTACTS_PER_COMPANY);
  });
});
