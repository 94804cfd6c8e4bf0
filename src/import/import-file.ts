import { BadRequestException } from '@nestjs/common';
import { type FieldValues } from '../items/fields';
import { FieldChecker, isObject } from './field-checker';
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
