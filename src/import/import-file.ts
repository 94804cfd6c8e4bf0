import { BadRequestException } from '@nestjs/common';
import { parseIsoDateTime } from '../http/iso-date-time';
import { characterCount, type Field, type FieldValues, RESERVED_IDS } from '../items/fields';
import {
  COMPANY_FIELDS,
  CONTACT_FIELDS,
  MAX_CONTACTS_PER_COMPANY,
} from '../companies/company.fields';
import type { CompanyDto } from '../companies/dto/company.dto';
import type { LeadDto } from '../leads/dto/lead.dto';
import { LEAD_FIELDS } from '../leads/lead.fields';

/**
 * The import format (docs/admin.md, "Importing data"): `{"companies": [...], "leads": [...]}`, each
 * element exactly an object of the API. This file checks the shape of every record, without the
 * database; what needs the database (ids of other workspaces, a lead's company) is checked by
 * ImportService.
 */
export interface ImportFile {
  companies?: CompanyDto[];
  leads?: LeadDto[];
}

/** A contact ready to write: the API's fields. */
export type ContactRecord = FieldValues<typeof CONTACT_FIELDS>;

/** A company ready to write: the API's fields with its dates parsed. */
export type CompanyRecord = FieldValues<typeof COMPANY_FIELDS> & { contacts: ContactRecord[] };

/** A lead ready to write; `companyName` is checked, not stored (it is read from the company). */
export type LeadRecord = FieldValues<typeof LEAD_FIELDS>;

/** One element of the file: where it is, its id if it has a usable one, and what is wrong. */
export interface Entry<T> {
  location: string;
  id: string | null;
  problems: string[];
  /** The record, when it has no problem of its own. */
  value: T | null;
}

export interface CompanyEntry extends Entry<CompanyRecord> {
  /** The name as given, if it is a string: a lead's companyName is compared with it. */
  name: string | null;
  contacts: Entry<ContactRecord>[];
}

export interface LeadEntry extends Entry<LeadRecord> {
  companyId: string | null;
  companyName: string | null;
}

export interface CheckedFile {
  companies: CompanyEntry[];
  leads: LeadEntry[];
}

const TOP_LEVEL_FIELDS = ['companies', 'leads'];
// A count is a PostgreSQL INTEGER.
const MAX_INT4 = 2_147_483_647;
// What PostgreSQL stores and JavaScript prints as a four-digit year: PostgreSQL has no year 0000.
const MIN_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Checks every record of a parsed import file. Throws only when the file as a whole has the
 * wrong shape; bad records are reported in the entries' `problems`, every one of them.
 */
export function checkImportFile(input: unknown): CheckedFile {
  if (!isObject(input)) {
    throw new BadRequestException(
      'the file must hold one JSON object {"companies": [...], "leads": [...]}',
    );
  }
  const unknown = Object.keys(input).filter((key) => !TOP_LEVEL_FIELDS.includes(key));
  if (unknown.length > 0) {
    throw new BadRequestException(
      `the file has unknown top-level field ${unknown.map((key) => `"${key}"`).join(', ')}: only "companies" and "leads" are allowed`,
    );
  }
  const companies = arrayField(input, 'companies').map((raw, index) =>
    checkCompany(raw, `companies[${index}]`),
  );
  const leads = arrayField(input, 'leads').map((raw, index) => checkLead(raw, `leads[${index}]`));
  markDuplicates(companies);
  markDuplicates(companies.flatMap((company) => company.contacts));
  markDuplicates(leads);
  // A company is written with its contacts or not at all.
  for (const company of companies) {
    if (company.contacts.some((contact) => contact.value === null)) company.value = null;
  }
  return { companies, leads };
}

/** Every entry with a problem, in file order, one line each: `companies[3] (id co_9): ...`. */
export function describeProblems(file: CheckedFile): string[] {
  const entries: Entry<unknown>[] = [
    ...file.companies.flatMap((company) => [company, ...company.contacts]),
    ...file.leads,
  ];
  return entries
    .filter((entry) => entry.problems.length > 0)
    .map((entry) => {
      const id = entry.id === null ? 'no valid id' : `id ${entry.id}`;
      return `${entry.location} (${id}): ${entry.problems.join('; ')}`;
    });
}

function arrayField(input: Record<string, unknown>, field: string): unknown[] {
  const value = input[field];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new BadRequestException(`"${field}" must be an array`);
  return value as unknown[];
}

function checkCompany(raw: unknown, location: string): CompanyEntry {
  const fields = new FieldChecker(raw, [...Object.keys(COMPANY_FIELDS), 'contacts']);
  const company = fields.read(COMPANY_FIELDS);
  fields.readableId('id', company.id, '/v1/companies/');
  if (
    fields.isValid('firstSeen') &&
    fields.isValid('lastSeen') &&
    company.lastSeen.getTime() < company.firstSeen.getTime()
  ) {
    fields.problem('lastSeen must not be before firstSeen');
  }
  const contactList = fields.array('contacts');
  // Bounds a company's size, and so a page's (docs/api.md, "Sizes"); the database refuses more too.
  if (contactList.length > MAX_CONTACTS_PER_COMPANY) {
    fields.problem(
      `contacts must hold at most ${MAX_CONTACTS_PER_COMPANY} contacts (it holds ${contactList.length})`,
    );
  }
  const contacts = contactList.map((contact, index) =>
    checkContact(contact, `${location}.contacts[${index}]`),
  );
  const written = contacts.flatMap((contact) => (contact.value ? [contact.value] : []));
  return {
    ...entry(location, fields, { ...company, contacts: written }),
    name: fields.isValid('name') ? company.name : null,
    contacts,
  };
}

function checkContact(raw: unknown, location: string): Entry<ContactRecord> {
  const fields = new FieldChecker(raw, Object.keys(CONTACT_FIELDS));
  return entry(location, fields, fields.read(CONTACT_FIELDS));
}

function checkLead(raw: unknown, location: string): LeadEntry {
  const fields = new FieldChecker(raw, Object.keys(LEAD_FIELDS));
  const lead = fields.read(LEAD_FIELDS);
  fields.readableId('id', lead.id, '/v1/leads/');
  return {
    ...entry(location, fields, lead),
    companyId: fields.isValid('companyId') ? lead.companyId : null,
    companyName: fields.isValid('companyName') ? lead.companyName : null,
  };
}

function entry<T extends { id: string }>(
  location: string,
  fields: FieldChecker,
  value: T,
): Entry<T> {
  return {
    location,
    id: fields.isValid('id') ? value.id : null,
    problems: fields.problems,
    value: fields.problems.length === 0 ? value : null,
  };
}

/** An id used twice in one file is refused on every use after the first. */
function markDuplicates(entries: Entry<unknown>[]): void {
  const firstUse = new Map<string, string>();
  for (const entry of entries) {
    if (entry.id === null) continue;
    const first = firstUse.get(entry.id);
    if (first === undefined) {
      firstUse.set(entry.id, entry.location);
    } else {
      entry.problems.push(`id ${entry.id} is already used by ${first}`);
      entry.value = null;
    }
  }
}

/**
 * Reads the fields of one record, collecting a message per bad field. Getters return a
 * placeholder for a bad field: the record is then discarded, so the placeholder is never written.
 */
class FieldChecker {
  readonly problems: string[] = [];
  private readonly record: Record<string, unknown>;
  private readonly invalid = new Set<string>();

  constructor(raw: unknown, allowed: readonly string[]) {
    if (!isObject(raw)) {
      this.record = {};
      this.problems.push('must be a JSON object');
      for (const field of allowed) this.invalid.add(field);
      return;
    }
    this.record = raw;
    for (const field of Object.keys(raw)) {
      if (!allowed.includes(field)) this.problems.push(`${field} is not a field of this record`);
    }
  }

  isValid(field: string): boolean {
    return !this.invalid.has(field);
  }

  /** Every field of an item's field map, each checked by its kind (items/fields.ts). */
  read<M extends Record<string, Field>>(map: M): FieldValues<M> {
    const values: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(map)) values[name] = this.field(name, field);
    return values as FieldValues<M>;
  }

  private field(name: string, field: Field): unknown {
    switch (field.kind) {
      case 'text':
        return this.text(name, field.maxLength);
      case 'nullableText':
        return this.nullableText(name, field.maxLength);
      case 'score':
        return this.score(name);
      case 'count':
        return this.integer(name, 0, MAX_INT4);
      case 'dateTime':
        return this.dateTime(name);
      case 'enum':
        return this.oneOf(name, field.values);
    }
  }

  problem(message: string): void {
    this.problems.push(message);
  }

  /** An item's id that its single-item path can name (RESERVED_IDS). */
  readableId(field: string, id: string, path: string): void {
    if (!this.isValid(field) || !RESERVED_IDS.includes(id)) return;
    const why =
      id === 'changes'
        ? `${path}changes is the change feed`
        : `URL clients resolve ${path}${id} to another path`;
    this.fail(
      field,
      `${field} "${id}" is reserved: ${why}, so the item could not be read`,
      undefined,
    );
  }

  text(field: string, maxLength: number): string {
    const value = this.present(field);
    if (value === undefined) return '';
    if (!isText(value)) return this.fail(field, `${field} must be a non-empty string`, '');
    return this.storable(field, value, maxLength, '');
  }

  /** Present, and null when unknown: never omitted (docs/api.md, "Data conventions"). */
  nullableText(field: string, maxLength: number): string | null {
    if (this.invalid.has(field)) return null;
    if (!(field in this.record)) {
      return this.fail(field, `${field} is required (null when unknown)`, null);
    }
    const value = this.record[field];
    if (value === null) return null;
    if (!isText(value))
      return this.fail(field, `${field} must be a non-empty string or null`, null);
    return this.storable(field, value, maxLength, null);
  }

  /**
   * Text that PostgreSQL stores and gives back unchanged, within its field's bound. A string of
   * JSON can hold what UTF-8 cannot: a lone UTF-16 surrogate (`"\ud800"`), which the driver's
   * encoding would silently turn into U+FFFD, and NUL, which PostgreSQL's text refuses. Every
   * other character a JavaScript string can hold is a Unicode scalar value, which UTF-8 encodes
   * and PostgreSQL (UTF8) stores as it is: no normalization, no other substitution.
   */
  private storable<T>(field: string, value: string, maxLength: number, placeholder: T): string | T {
    if (!value.isWellFormed()) {
      let position = 0;
      for (const character of value) {
        position++;
        const unit = character.charCodeAt(0);
        if (character.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
          return this.fail(
            field,
            `${field} holds a lone UTF-16 surrogate (U+${unit.toString(16).toUpperCase()}, character ${position}), which UTF-8 cannot encode: it would be stored as U+FFFD`,
            placeholder,
          );
        }
      }
    }
    if (value.includes('\u0000')) {
      return this.fail(
        field,
        `${field} must not hold NUL (U+0000), which PostgreSQL text cannot store`,
        placeholder,
      );
    }
    const length = characterCount(value);
    if (length > maxLength) {
      return this.fail(
        field,
        `${field} must be at most ${maxLength} characters (it has ${length})`,
        placeholder,
      );
    }
    return value;
  }

  score(field: string): number {
    const value = this.present(field);
    if (value === undefined) return 0;
    if (typeof value === 'number' && value >= 0 && value <= 100) return value;
    return this.fail(field, `${field} must be a number between 0 and 100`, 0);
  }

  integer(field: string, min: number, max: number): number {
    const value = this.present(field);
    if (value === undefined) return 0;
    if (Number.isInteger(value) && (value as number) >= min && (value as number) <= max) {
      return value as number;
    }
    return this.fail(field, `${field} must be an integer between ${min} and ${max}`, 0);
  }

  oneOf<T extends string>(field: string, allowed: readonly T[]): T {
    const value = this.present(field);
    if (value === undefined) return allowed[0];
    if (allowed.includes(value as T)) return value as T;
    return this.fail(field, `${field} must be one of ${allowed.join(', ')}`, allowed[0]);
  }

  /** ISO 8601; stored to the millisecond, so a finer fraction would not come back unchanged. */
  dateTime(field: string): Date {
    const value = this.present(field);
    const placeholder = new Date(0);
    if (value === undefined) return placeholder;
    const parsed = typeof value === 'string' ? parseIsoDateTime(value) : null;
    if (!parsed) return this.fail(field, `${field} must be an ISO 8601 date-time`, placeholder);
    if (parsed.getTime() < MIN_INSTANT || parsed.getTime() > MAX_INSTANT) {
      return this.fail(
        field,
        `${field} must be between the years 0001 and 9999 (UTC)`,
        placeholder,
      );
    }
    const fraction = /[.,](\d+)/.exec(value as string)?.[1] ?? '';
    if (/[1-9]/.test(fraction.slice(3))) {
      return this.fail(field, `${field} must not be more precise than milliseconds`, placeholder);
    }
    return parsed;
  }

  array(field: string): unknown[] {
    const value = this.present(field);
    if (value === undefined) return [];
    if (Array.isArray(value)) return value as unknown[];
    return this.fail(field, `${field} must be an array`, []);
  }

  private present(field: string): unknown {
    if (this.invalid.has(field)) return undefined;
    const value = this.record[field];
    if (value === undefined) return this.fail(field, `${field} is required`, undefined);
    return value;
  }

  private fail<T>(field: string, message: string, placeholder: T): T {
    this.invalid.add(field);
    this.problems.push(message);
    return placeholder;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}
