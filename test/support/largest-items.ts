import { Client } from 'pg';
import {
  COMPANY_FIELDS,
  CONTACT_FIELDS,
  MAX_CONTACTS_PER_COMPANY,
} from '../../src/companies/company.fields';
import type { Field } from '../../src/items/fields';

/*
 * Companies as large as the bounds allow (test/support/response-size.ts): every text field at its
 * maximum length in the character that weighs most once written as JSON (U+0001, `\u0001`: 6
 * bytes), after an emoji, so that the server holds the body as a two-byte string (2 bytes of heap a
 * character); numbers and dates at their longest; each company with its maximum of contacts,
 * likewise. Written by SQL, from the field maps, in two statements.
 */

/** A text value of exactly `length` characters that weighs the most as JSON. */
function heaviest(length: number, prefix = ''): string {
  // SQL text: an emoji (two-byte string in V8), the prefix, then U+0001 up to the length.
  return `chr(128512) || ${prefix ? `${prefix} || ` : ''}repeat(chr(1), ${length} - 1${
    prefix ? ` - char_length(${prefix})` : ''
  })`;
}

/** The SQL value of each column of a map: text at its bound, numbers and dates at their longest. */
function columnValues(fields: Record<string, Field>): Record<string, string> {
  return Object.fromEntries(
    Object.values(fields).flatMap((field) => {
      switch (field.kind) {
        case 'text':
        case 'nullableText':
          return field.column === 'id' ? [] : [[field.column, heaviest(field.maxLength)]];
        case 'score':
          return [[field.column, '1.2345678901234567e-300']];
        case 'count':
        case 'nullableCount':
          return [[field.column, '2147483647']];
        case 'dateTime':
          return [[field.column, "'9999-12-31T23:59:59.999Z'"]];
        case 'enum':
          return [
            [
              field.column,
              `'${field.values.reduce((a, b) => (b.length > a.length ? b : a))}'::"${field.type}"`,
            ],
          ];
      }
    }),
  );
}

/** `count` such companies in the workspace, ids `co_<workspace>_000001...` (then U+0001...). */
export async function loadLargestCompanies(
  url: string,
  workspaceId: string,
  count: number,
): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const company = columnValues(COMPANY_FIELDS);
    const companyId = heaviest(
      COMPANY_FIELDS.id.maxLength,
      "'co_' || $1 || '_' || lpad(g::text, 6, '0')",
    );
    await client.query(
      `INSERT INTO companies (id, workspace_id, ${Object.keys(company).join(', ')})
       SELECT ${companyId}, $1, ${Object.values(company).join(', ')}
       FROM generate_series(1, ${count}) g`,
      [workspaceId],
    );
    const contact = columnValues(CONTACT_FIELDS);
    const contactId = heaviest(
      CONTACT_FIELDS.id.maxLength,
      "'ct_' || $1 || '_' || lpad(g::text, 6, '0') || '_' || lpad(h::text, 2, '0')",
    );
    await client.query(
      `INSERT INTO contacts (id, workspace_id, company_id, ${Object.keys(contact).join(', ')})
       SELECT ${contactId}, $1, ${companyId}, ${Object.values(contact).join(', ')}
       FROM generate_series(1, ${count}) g, generate_series(1, ${MAX_CONTACTS_PER_COMPANY}) h`,
      [workspaceId],
    );
  } finally {
    await client.end();
  }
}
