import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPANY_FIELDS, CONTACT_FIELDS } from '../../src/companies/company.fields';
import { LEAD_FIELDS } from '../../src/leads/lead.fields';
import { MAX_PAGES_PER_VISIT, PAGE_VIEW_FIELDS, VISIT_FIELDS } from '../../src/visits/visit.fields';
import type { Field } from '../../src/items/fields';
import { largestResponses } from '../support/largest-responses';
import { MAX_BYTES_PER_CHARACTER, maxCursorLength, maxObjectBytes } from '../support/response-size';

// 17 significant digits and an exponent of three: the longest a score can be written.
const LONGEST_SCORE = Number.parseFloat('1.2345678901234568e-300');

/** An object of the map with every field at its largest, as JSON writes it. */
function largestObject(fields: Record<string, Field>): Record<string, unknown> {
  return Object.fromEntries<unknown>(
    Object.entries(fields).map(([name, field]) => {
      switch (field.kind) {
        case 'text':
        case 'nullableText':
          // JSON.stringify writes U+0001 as PostgreSQL does: `\u0001`.
          return [name, '\u0001'.repeat(field.maxLength)];
        case 'score':
          return [name, LONGEST_SCORE];
        case 'count':
        case 'nullableCount':
          return [name, 2 ** 31 - 1];
        case 'dateTime':
          return [name, '294276-12-31T23:59:59.999Z'];
        case 'enum':
          return [name, field.values.reduce((a, b) => (b.length > a.length ? b : a))];
      }
    }),
  );
}

describe('the largest responses (response-size.ts)', () => {
  it('U+0001 is the heaviest character: 6 bytes of JSON', () => {
    expect(JSON.stringify('\u0001')).toHaveLength(2 + MAX_BYTES_PER_CHARACTER);
    for (const character of ['"', '\\', '\n', '\u{1f600}', '\u2028', '\u00e9', '\u007f']) {
      expect(Buffer.byteLength(JSON.stringify(character))).toBeLessThanOrEqual(
        2 + MAX_BYTES_PER_CHARACTER,
      );
    }
  });

  it.each([
    ['a contact', CONTACT_FIELDS],
    ['a lead', LEAD_FIELDS],
    ['a page view', PAGE_VIEW_FIELDS],
  ])('%s: exactly the JSON of one at every bound', (_name, fields) => {
    expect(maxObjectBytes(fields)).toBe(Buffer.byteLength(JSON.stringify(largestObject(fields))));
  });

  it('a company with its maximum of contacts: exactly the JSON of one', () => {
    const { company, contact } = largestResponses();
    const contacts = Array.from({ length: 10 }, () => largestObject(CONTACT_FIELDS));
    const largest = { ...largestObject(COMPANY_FIELDS), contacts };

    expect(contact).toBe(Buffer.byteLength(JSON.stringify(largestObject(CONTACT_FIELDS))));
    expect(company).toBe(Buffer.byteLength(JSON.stringify(largest)));
  });

  it('a visit with its maximum of page views: exactly the JSON of one', () => {
    const pages = Array.from({ length: MAX_PAGES_PER_VISIT }, () =>
      largestObject(PAGE_VIEW_FIELDS),
    );
    const largest = { ...largestObject(VISIT_FIELDS), pages };

    expect(largestResponses().visit).toBe(Buffer.byteLength(JSON.stringify(largest)));
  });

  it('a cursor of an id at its maximum, four bytes a character, is no longer than computed', () => {
    const payload = `${'9'.repeat(20)}:${'9'.repeat(20)}:${'\u{1f600}'.repeat(100)}`;
    const cursor = `${Buffer.from(payload).toString('base64url')}.${Buffer.alloc(16).toString('base64url')}`;

    expect(cursor.length).toBeLessThanOrEqual(maxCursorLength(100));
  });

  it('docs/api.md states them ("Sizes")', () => {
    const api = readFileSync(join(__dirname, '../..', 'docs', 'api.md'), 'utf8');
    const section = api.slice(api.indexOf('## Sizes'), api.indexOf('## Endpoints'));
    const sizes = largestResponses();
    const rows: [string, number][] = [
      ['A [Contact](#contact), within its company', sizes.contact],
      ['`GET /v1/companies/{id}`: a company, 10 contacts', sizes.company],
      ['`GET /v1/leads/{id}`', sizes.lead],
      ['`GET /v1/companies?limit=200`', sizes.companyPage],
      ['`GET /v1/leads?limit=200`', sizes.leadPage],
      ['`GET /v1/companies/changes?limit=1000`', sizes.companyChangePage],
      ['`GET /v1/leads/changes?limit=1000`', sizes.leadChangePage],
      ['A [PageView](visits.md#pageview), within its visit', sizes.pageView],
      ['`GET /v1/visits/{id}`: a visit, 500 page views', sizes.visit],
      ['`GET /v1/visits?limit=200`', sizes.visitPage],
      ['`GET /v1/visits/changes?limit=1000`', sizes.visitChangePage],
    ];
    for (const [response, bytes] of rows) {
      expect(section).toMatch(
        new RegExp(
          `\\| ${response.replace(/[[\]().?{}|]/g, '\\$&')} +\\| ${bytes.toLocaleString('en')}[ (]`,
        ),
      );
    }
  });
});
