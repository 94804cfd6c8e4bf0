import { Injectable } from '@nestjs/common';
import { ChangeCursors } from '../changes/change-cursor';
import { ChangeStreams } from '../changes/stream/change-streams';
import { ResourceReads } from '../changes/resource-reads';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import { BodyBudget } from '../items/body-budget';
import type { LeadUpsertedDto } from './dto/lead-change-page.dto';
import type { LeadListQueryDto } from './dto/lead-list-query.dto';
import type { LeadDto } from './dto/lead.dto';
import { LEAD_LIST, LEAD_STATEMENTS } from './leads.sql';

/** The leads' reads: a page, one lead with its company's name, a page of their feed. */
@Injectable()
export class LeadsService extends ResourceReads<LeadDto, LeadListQueryDto, LeadUpsertedDto> {
  constructor(
    database: Database,
    cursors: ChangeCursors,
    bodies: BodyBudget,
    streams: ChangeStreams,
    environment: Environment,
  ) {
    const statements = { list: LEAD_LIST, selected: LEAD_STATEMENTS };
    super({ feed: 'leads', ...statements }, database, cursors, bodies, streams, {
      visitRetentionDays: environment.VISIT_RETENTION_DAYS,
    });
  }
}
