import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildDemoData,
  DEMO_COMPANY_COUNT,
  DEMO_LEAD_COUNT,
  intentLevelOf,
  isLuhnValid,
  LOOKUP_EXAMPLES,
} from './demo-data';
import { checkImportFile, describeProblems } from './import-file';

const NOW = Date.parse('2026-03-01T09:41:27.512Z');
const DAY_MS = 86_400_000;

describe('buildDemoData', () => {
  const data = buildDemoData(NOW);

  it('is a valid import file: every record passes the import checks', () => {
    expect(describeProblems(checkImportFile(data))).toEqual([]);
  });

  it('has a few hundred companies and about 120 leads, every lead on one of them', () => {
    expect(data.companies).toHaveLength(DEMO_COMPANY_COUNT);
    expect(data.leads).toHaveLength(DEMO_LEAD_COUNT);
    const names = new Map(data.companies.map((company) => [company.id, company.name]));
    for (const lead of data.leads) expect(lead.companyName).toBe(names.get(lead.companyId));
  });

  it('is the same on every run, so that re-seeding updates the same records', () => {
    expect(buildDemoData(NOW)).toEqual(data);
    // Only the dates follow the clock.
    const later = buildDemoData(NOW + 7 * DAY_MS);
    expect(later.companies.map(({ firstSeen: _f, lastSeen: _l, ...rest }) => rest)).toEqual(
      data.companies.map(({ firstSeen: _f, lastSeen: _l, ...rest }) => rest),
    );
  });

  it('gives every company a plausible, unique name and a domain derived from it', () => {
    expect(new Set(data.companies.map((c) => c.name)).size).toBe(data.companies.length);
    expect(new Set(data.companies.map((c) => c.domain)).size).toBe(data.companies.length);
    for (const company of data.companies) {
      expect(company.domain).toMatch(/^[a-z0-9]+\.[a-z.]+$/);
      expect(company.size).toMatch(/^\d+-\d+$|^\d+\+$/);
    }
  });

  it('gives French companies a valid SIREN (9 digits, Luhn) or none, and others none', () => {
    const french = data.companies.filter((c) => c.country === 'France');
    expect(french.filter((c) => c.siren !== null).length).toBeGreaterThan(french.length / 2);
    for (const company of data.companies) {
      if (company.country !== 'France') expect(company.siren).toBeNull();
      if (company.siren !== null) {
        expect(company.siren).toMatch(/^\d{9}$/);
        expect(isLuhnValid(company.siren)).toBe(true);
      }
    }
  });

  it('keeps intentLevel consistent with intentScore, with ties in the scores', () => {
    for (const record of [...data.companies, ...data.leads]) {
      expect(record.intentLevel).toBe(intentLevelOf(record.intentScore));
    }
    const scores = data.companies.map((c) => c.intentScore);
    expect(new Set(scores).size).toBeLessThan(scores.length);
    expect(new Set(data.companies.map((c) => c.intentLevel))).toEqual(
      new Set(['hot', 'warm', 'cold']),
    );
  });

  it('dates every visit and lead within the last 90 days, first seen before last seen', () => {
    for (const company of data.companies) {
      const first = Date.parse(company.firstSeen);
      const last = Date.parse(company.lastSeen);
      expect(first).toBeLessThanOrEqual(last);
      expect(first).toBeGreaterThanOrEqual(NOW - 90 * DAY_MS);
      expect(last).toBeLessThanOrEqual(NOW);
    }
    for (const lead of data.leads) {
      expect(Date.parse(lead.createdAt)).toBeGreaterThanOrEqual(NOW - 90 * DAY_MS);
      expect(Date.parse(lead.createdAt)).toBeLessThanOrEqual(NOW);
    }
  });

  it('gives companies 0 to 4 contacts, some of them without email, phone or profile', () => {
    const contacts = data.companies.flatMap((c) => c.contacts);
    const counts = new Set(data.companies.map((c) => c.contacts.length));
    expect(counts).toEqual(new Set([0, 1, 2, 3, 4]));
    for (const field of ['email', 'phone', 'linkedin'] as const) {
      expect(contacts.some((c) => c[field] === null)).toBe(true);
      expect(contacts.some((c) => c[field] !== null)).toBe(true);
    }
  });
});

describe('isLuhnValid', () => {
  it('accepts real SIRENs and refuses a changed digit', () => {
    expect(isLuhnValid('732829320')).toBe(true);
    expect(isLuhnValid('552100554')).toBe(true);
    expect(isLuhnValid('732829321')).toBe(false);
  });
});

describe("the docs' lookup examples, on the demo data", () => {
  const { companies } = buildDemoData(NOW);
  const read = (file: string) => readFileSync(join(__dirname, '..', '..', file), 'utf8');
  // The examples: docs/api.md's requests, the Lookups line of docs/using-the-api.md, and the
  // tool arguments of docs/agents.md. (Other `q=` of docs/api.md show a rule, not the data.)
  const api = read('docs/api.md');
  const lookupsLine = read('docs/using-the-api.md')
    .split('\n- ')
    .filter((item) => item.startsWith('Lookups'))
    .join('\n');
  const agents = read('docs/agents.md');
  const all = (text: string, pattern: RegExp) => [...text.matchAll(pattern)];
  // As the lookups compare (docs/api.md, "Lookups: domain and q").
  const asDomain = (text: string) =>
    text
      .toLowerCase()
      .replace(/^www\./, '')
      .replace(/\.$/, '');

  it('domain: every domain of every example is a demo company', () => {
    const lists = [
      ...all(api, /`GET \/v1\/companies\?domain=([^&`]+)/g),
      ...all(lookupsLine, /`domain=([^`]+)`/g),
      ...all(agents, /domain: \["([^"]+)"\]/g),
    ].map((match) => match[1]);
    expect(lists.length).toBe(4);
    const stored = new Set(companies.map((company) => asDomain(company.domain)));
    for (const list of lists) {
      for (const domain of list.split(',')) expect(stored).toContain(asDomain(domain));
    }
  });

  it('q: every example finds the company it looks for (and, with intentLevel, one of it)', () => {
    const examples = [
      ...all(api, /`GET \/v1\/companies\?q=(\w+)(?:&intentLevel=(\w+))?/g),
      ...all(lookupsLine, /`q=(\w+)`/g),
      ...all(agents, /q: "(\w+)"/g),
    ];
    expect(examples.length).toBe(4);
    for (const [, q, intentLevel] of examples) {
      const found = companies.filter(
        (company) =>
          `${company.name}\n${company.domain}`.toLowerCase().includes(q.toLowerCase()) &&
          (intentLevel === undefined || company.intentLevel === intentLevel),
      );
      expect(found.map((company) => company.name)).toContain(LOOKUP_EXAMPLES[0].name);
    }
  });
});
