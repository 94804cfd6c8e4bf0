import type { CrmStatus, IntentLevel, Prisma, Seniority } from '../../generated/prisma/client';

export class ContactDto {
  id!: string;
  name!: string;
  jobTitle!: string;
  email!: string | null;
  phone!: string | null;
  linkedin!: string | null;
  seniority!: Seniority;
}

export class CompanyDto {
  id!: string;
  name!: string;
  domain!: string;
  industry!: string;
  size!: string;
  country!: string;
  city!: string;
  revenue!: string;
  siren!: string | null;
  intentScore!: number;
  intentLevel!: IntentLevel;
  icpScore!: number;
  commercialScore!: number;
  crmStatus!: CrmStatus;
  visitsCount!: number;
  firstSeen!: string;
  lastSeen!: string;
  contacts!: ContactDto[];
}

/** The columns a company of the API is made of, contacts in the contract's order. */
export const companySelect = {
  id: true,
  name: true,
  domain: true,
  industry: true,
  size: true,
  country: true,
  city: true,
  revenue: true,
  siren: true,
  intentScore: true,
  intentLevel: true,
  icpScore: true,
  commercialScore: true,
  crmStatus: true,
  visitsCount: true,
  firstSeen: true,
  lastSeen: true,
  contacts: {
    select: {
      id: true,
      name: true,
      jobTitle: true,
      email: true,
      phone: true,
      linkedin: true,
      seniority: true,
    },
    // The enum is declared c_level, vp, director, manager, ic: its order is the contract's.
    orderBy: [{ seniority: 'asc' }, { name: 'asc' }, { id: 'asc' }],
  },
} satisfies Prisma.CompanySelect;

export type CompanyRow = Prisma.CompanyGetPayload<{ select: typeof companySelect }>;

/** A row as the contract shows it: every field present, nulls kept, dates in UTC ISO 8601. */
export function toCompanyDto(row: CompanyRow): CompanyDto {
  return {
    ...row,
    firstSeen: row.firstSeen.toISOString(),
    lastSeen: row.lastSeen.toISOString(),
  };
}
