import { Injectable } from '@nestjs/common';
import { ChangeCursors } from '../changes/change-cursor';
import { ChangeStreams } from '../changes/change-streams';
import { ResourceReads } from '../changes/resource-reads';
import { Database } from '../database/database';
import { BodyBudget } from '../items/body-budget';
import {
  COMPANY_CHANGE_STREAM_SQL,
  COMPANY_CHANGES_SQL,
  COMPANY_LIST,
  COMPANY_SQL,
} from './companies.sql';
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
  ) {
    const statements = {
      list: COMPANY_LIST,
      item: COMPANY_SQL,
      changes: COMPANY_CHANGES_SQL,
      stream: COMPANY_CHANGE_STREAM_SQL,
    };
    super({ feed: 'companies', ...statements }, database, cursors, bodies, streams);
  }
}
