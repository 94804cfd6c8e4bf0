import { Injectable, NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ChangeCursors } from '../changes/change-cursor';
import { type ChangePage, ChangeFeedPages } from '../changes/change-feed';
import type { ItemDeletedDto } from '../changes/dto/change.dto';
import { ChangeStreams } from '../changes/stream/change-streams';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import { type JsonText, jsonText } from '../http/json-text';
import { BodyBudget } from '../items/body-budget';
import { cursorPage } from '../items/cursor-page';
import type { BySelection, Selection } from '../items/field-selection';
import { isPossibleId } from '../items/fields';
import { invalidCursor, SignedCursors } from '../items/signed-cursors';
import type { VisitDto } from './dto/visit.dto';
import type { VisitPageDto } from './dto/visit-page.dto';
import type { VisitUpsertedDto } from './dto/visit-change-page.dto';
import type {
  CompanyVisitListQueryDto,
  VisitChangesQueryDto,
  VisitChangeStreamQueryDto,
  VisitListQueryDto,
} from './dto/visit-read-queries.dto';
import { type VisitChangeStatements, visitChangeStatements, VISIT_STATEMENTS } from './visits.sql';

/** A row of a visit list's statement (visits.sql.ts). */
interface VisitPageRow {
  has_more: boolean;
  last_started_at: string | null;
  last_id: string | null;
  company_found?: boolean;
  data: string | null;
  bytes: number;
}

/** A cursor's position: the last visit of a page, as the statement wrote its startedAt. */
interface VisitPosition {
  startedAt: string;
  id: string;
}

// The statement writes startedAt as ISO 8601 with milliseconds: exactly what a cursor carries.
const POSITION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z) ([\s\S]+)$/;

/**
 * The visits' reads: a page of the workspace's or of one company's, newest first by cursor, one
 * visit, and the change feed (a page, the stream) as the other feeds have it (src/changes). Each statement runs in the workspace's turn (Database.forWorkspace), returns the body
 * PostgreSQL wrote, and is read through the body budget: a visit may hold 500 page views.
 */
@Injectable()
export class VisitsService {
  private readonly retentionDays: number;
  private readonly changeStatements: BySelection<VisitChangeStatements>;
  private readonly feedPages: ChangeFeedPages;

  constructor(
    private readonly database: Database,
    private readonly cursors: SignedCursors,
    private readonly bodies: BodyBudget,
    private readonly streams: ChangeStreams,
    changeCursors: ChangeCursors,
    environment: Environment,
  ) {
    this.retentionDays = environment.VISIT_RETENTION_DAYS;
    this.changeStatements = visitChangeStatements(this.retentionDays);
    this.feedPages = new ChangeFeedPages('visits', database, changeCursors, bodies);
  }

  /** A page of the workspace's visit feed after the query's cursor. */
  changes(
    workspaceId: string,
    query: VisitChangesQueryDto,
  ): Promise<JsonText<ChangePage<VisitUpsertedDto | ItemDeletedDto>>> {
    const { changes } = this.changeStatements.for(query.fields);
    return this.feedPages.page(workspaceId, changes, query);
  }

  /** The workspace's visit feed after the query's cursor, streamed to the response. */
  stream(
    workspaceId: string,
    query: VisitChangeStreamQueryDto,
    request: Request,
    response: Response,
  ): Promise<void> {
    const { stream } = this.changeStatements.for(query.fields);
    return this.streams.stream({
      statements: { feed: 'visits', ...stream },
      workspaceId,
      cursor: query.cursor,
      request,
      response,
    });
  }

  /** A page of the workspace's visits. */
  list(workspaceId: string, query: VisitListQueryDto): Promise<JsonText<VisitPageDto>> {
    return this.page(workspaceId, 'visits', query, query.companyId ?? null);
  }

  /** A page of one company's visits; 404 when the workspace has no such company. */
  async listOfCompany(
    workspaceId: string,
    companyId: string,
    query: CompanyVisitListQueryDto,
  ): Promise<JsonText<VisitPageDto>> {
    if (!isPossibleId(companyId)) throw new NotFoundException();
    return this.page(workspaceId, `company-visits:${companyId}`, query, [companyId], true);
  }

  /** One visit of the workspace; 404 when the id is not one of its visits, whether or not it exists. */
  async get(workspaceId: string, id: string, fields?: Selection): Promise<JsonText<VisitDto>> {
    if (!isPossibleId(id)) throw new NotFoundException();
    const sql = VISIT_STATEMENTS.for(fields).item;
    const database = this.database.forWorkspace(workspaceId);
    const row = await this.bodies.read(
      `visit:${workspaceId}`,
      async (cap) =>
        (
          await database.query<{ body: string | null; bytes: number }>(sql, [
            workspaceId,
            this.retentionDays,
            id,
            cap,
          ])
        )[0],
      (found) => found.body,
    );
    if (row?.body == null) throw new NotFoundException();
    return jsonText<VisitDto>(row.body);
  }

  private async page(
    workspaceId: string,
    scope: string,
    query: CompanyVisitListQueryDto,
    companyIds: string[] | null,
    ofCompany = false,
  ): Promise<JsonText<VisitPageDto>> {
    const after =
      query.cursor === undefined ? null : this.position(scope, workspaceId, query.cursor);
    const statements = VISIT_STATEMENTS.for(query.fields);
    const sql = ofCompany ? statements.companyList : statements.list;
    const database = this.database.forWorkspace(workspaceId);
    const values = [
      workspaceId,
      this.retentionDays,
      query.since ?? null,
      query.until ?? null,
      after?.startedAt ?? null,
      after?.id ?? null,
      query.limit,
      companyIds,
      query.page?.from ?? null,
      query.page?.to ?? null,
    ];
    const row = await this.bodies.read(
      `${ofCompany ? 'company-visits' : 'visits'}:${workspaceId}`,
      async (cap) => (await database.query<VisitPageRow>(sql, [...values, cap]))[0],
      (found) => found.data,
    );
    if (row === undefined) throw new Error('the visit list statement returned no row');
    if (ofCompany && !row.company_found) throw new NotFoundException();
    const nextCursor =
      row.has_more && row.last_started_at !== null && row.last_id !== null
        ? this.cursors.sign(scope, workspaceId, `${row.last_started_at} ${row.last_id}`)
        : null;
    return jsonText<VisitPageDto>(cursorPage(row, nextCursor, row.has_more));
  }

  /** The position of a cursor this list issued for the workspace, or a 400. */
  private position(scope: string, workspaceId: string, cursor: string): VisitPosition {
    const match = POSITION.exec(this.cursors.open(scope, workspaceId, cursor));
    if (!match) throw invalidCursor();
    return { startedAt: match[1], id: match[2] };
  }
}
