import { Injectable } from '@nestjs/common';
import { ChangeCursors } from '../changes/change-cursor';
import { ResourceReads } from '../changes/resource-reads';
import { Database } from '../database/database';
import { BodyBudget } from '../items/body-budget';
import { COMPANY_CHANGES_SQL, COMPANY_LIST, COMPANY_SQL } from './companies.sql';
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
  constructor(database: Database, cursors: ChangeCursors, bodies: BodyBudget) {
    const statements = { list: COMPANY_LIST, item: COMPANY_SQL, changes: COMPANY_CHANGES_SQL };
    super({ feed: 'companies', ...statements }, database, cursors, bodies);
  }
}
