import { Injectable } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { AppModule } from '../src/app.module';
import { APP_OPTIONS } from '../src/app.setup';
import { CompaniesService } from '../src/companies/companies.service';
import type { ListQueryDto } from '../src/http/list-query.dto';
import type { Page } from '../src/items/page';
import type { CompanyDto } from '../src/companies/dto/company.dto';
import type { Prisma } from '../src/generated/prisma/client';
import type { LeadDto } from '../src/leads/dto/lead.dto';
import { LeadsService } from '../src/leads/leads.service';
import { PrismaModule } from '../src/prisma/prisma.module';
import { PrismaService } from '../src/prisma/prisma.service';
import { startServer } from '../src/server/start-server';

/**
 * The naive implementation a typical team would write, kept for the benchmark only: the service
 * as shipped, except that each list is Prisma `findMany` with `skip`/`take` (and `include` of the
 * contacts) plus `count()`, in one REPEATABLE READ transaction so that the two agree. Everything
 * else (auth, rate limit, validation, logging) is the shipped code.
 */
/** The columns a company of the API is made of, contacts in the contract's order. */
const companySelect = {
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

type CompanyRow = Prisma.CompanyGetPayload<{ select: typeof companySelect }>;

/** A row as the contract shows it: every field present, nulls kept, dates in UTC ISO 8601. */
function toCompanyDto(row: CompanyRow): CompanyDto {
  return {
    ...row,
    firstSeen: row.firstSeen.toISOString(),
    lastSeen: row.lastSeen.toISOString(),
  };
}

const leadSelect = {
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

type LeadRow = Prisma.LeadGetPayload<{ select: typeof leadSelect }>;

function toLeadDto({ company, ...row }: LeadRow): LeadDto {
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

@Injectable()
class NaiveCompaniesService {
  constructor(private readonly prisma: PrismaService) {}

  async list(workspaceId: string, query: ListQueryDto): Promise<Page<CompanyDto>> {
    const where: Prisma.CompanyWhereInput = {
      workspaceId,
      ...(query.since && { lastSeen: { gte: query.since } }),
    };
    const [total, rows] = await this.prisma.$transaction(
      [
        this.prisma.company.count({ where }),
        this.prisma.company.findMany({
          where,
          orderBy: [{ intentScore: 'desc' }, { id: 'asc' }],
          skip: query.offset,
          take: query.limit,
          select: companySelect,
        }),
      ],
      { isolationLevel: 'RepeatableRead' },
    );
    return { total, limit: query.limit, offset: query.offset, data: rows.map(toCompanyDto) };
  }
}

@Injectable()
class NaiveLeadsService {
  constructor(private readonly prisma: PrismaService) {}

  async list(workspaceId: string, query: ListQueryDto): Promise<Page<LeadDto>> {
    const where: Prisma.LeadWhereInput = {
      workspaceId,
      ...(query.since && { createdAt: { gte: query.since } }),
    };
    const [total, rows] = await this.prisma.$transaction(
      [
        this.prisma.lead.count({ where }),
        this.prisma.lead.findMany({
          where,
          orderBy: [{ intentScore: 'desc' }, { id: 'asc' }],
          skip: query.offset,
          take: query.limit,
          select: leadSelect,
        }),
      ],
      { isolationLevel: 'RepeatableRead' },
    );
    return { total, limit: query.limit, offset: query.offset, data: rows.map(toLeadDto) };
  }
}

async function main(): Promise<void> {
  // The service never loads Prisma; its naive variant does, for these two services.
  const module = await Test.createTestingModule({ imports: [AppModule, PrismaModule] })
    .overrideProvider(CompaniesService)
    .useClass(NaiveCompaniesService)
    .overrideProvider(LeadsService)
    .useClass(NaiveLeadsService)
    .compile();
  await startServer(
    module.createNestApplication<NestExpressApplication>({ ...APP_OPTIONS, bufferLogs: true }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
