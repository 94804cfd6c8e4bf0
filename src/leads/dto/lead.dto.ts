import type { IntentLevel, LeadStatus, Prisma } from '../../generated/prisma/client';

export class LeadDto {
  id!: string;
  companyId!: string;
  companyName!: string;
  contactName!: string;
  contactTitle!: string;
  intentScore!: number;
  intentLevel!: IntentLevel;
  signal!: string;
  recommendedAction!: string;
  status!: LeadStatus;
  createdAt!: string;
  contactEmail!: string | null;
  assignedToId!: string | null;
}

export const leadSelect = {
  id: true,
  companyId: true,
  contactName: true,
  contactTitle: true,
  intentScore: true,
  intentLevel: true,
  signal: true,
  recommendedAction: true,
  status: true,
  createdAt: true,
  contactEmail: true,
  assignedToId: true,
  // A lead's companyName is its company's name, read rather than copied so it cannot drift.
  company: { select: { name: true } },
} satisfies Prisma.LeadSelect;

export type LeadRow = Prisma.LeadGetPayload<{ select: typeof leadSelect }>;

export function toLeadDto({ company, ...row }: LeadRow): LeadDto {
  return {
    id: row.id,
    companyId: row.companyId,
    companyName: company.name,
    contactName: row.contactName,
    contactTitle: row.contactTitle,
    intentScore: row.intentScore,
    intentLevel: row.intentLevel,
    signal: row.signal,
    recommendedAction: row.recommendedAction,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    contactEmail: row.contactEmail,
    assignedToId: row.assignedToId,
  };
}
