import { Injectable } from '@nestjs/common';
import { ChangeCursors } from '../changes/change-cursor';
import { ChangeStreams } from '../changes/stream/change-streams';
import { ResourceReads } from '../changes/resource-reads';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import { BodyBudget } from '../items/body-budget';
import { COMPANY_LIST, COMPANY_STATEMENTS } from './companies.sql';
import type { CompanyUpsertedDto } from './dto/company-change-page.dto';
import type { CompanyListQueryDto } from './dto/company-list-query.dto';
import type { CompanyDto } from './dto/company.dto';

/** The companies' reads: a page, one company with its contacts, a page of their feed. */
@Injectable()
export class CompaniesService extends ResourceReads<
  CompanyDto,
  CompanyListQueryDto,
  CompanyUpsertedDto
> {
  constructor(
    database: Database,
    cursors: ChangeCursors,
    bodies: BodyBudget,
    streams: ChangeStreams,
    environment: Environment,
  ) {
    const statements = { list: COMPANY_LIST, selected: COMPANY_STATEMENTS };
    super({ feed: 'companies', ...statements }, database, cursors, bodies, streams, {
      visitRetentionDays: environment.VISIT_RETENTION_DAYS,
    });
  }
}
