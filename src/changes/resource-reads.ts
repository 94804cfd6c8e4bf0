import { NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Database } from '../database/database';
import type { JsonText, VersionedJson } from '../http/json-text';
import type { ListQueryDto } from '../http/list-query.dto';
import type { BodyBudget } from '../items/body-budget';
import { listPage, type ListStatements } from '../items/list-page';
import type { Page } from '../items/page';
import type { ChangeCursors } from './change-cursor';
import { type ChangePage, changeFeedPage } from './change-feed';
import { itemById } from '../items/item-sql';
import type { Feed } from './change-feed-sql';
import type { ChangesQueryDto } from './changes-query.dto';
import type { ChangeStreamQueryDto } from './change-stream-query.dto';
import type { ChangeStreams, StreamedFeed } from './change-streams';
import type { ItemDeletedDto } from './dto/change.dto';

/** What tells one resource's reads from another's: its feed's name and its statements. */
export interface ResourceStatements {
  feed: Feed;
  list: ListStatements;
  /** One item of the workspace, or no row (item-sql.ts). */
  item: string;
  /** A page of its change feed (change-feed-sql.ts). */
  changes: string;
  /** Its change stream's statements (change-streams.ts). */
  stream: Omit<StreamedFeed, 'feed'>;
}

/**
 * The reads of a resource with a change feed (companies, leads): a page of the list, one item, a
 * page of the feed, the whole feed as a stream. Each statement runs in the workspace's turn
 * (Database.forWorkspace) and returns the body PostgreSQL wrote, read through the body budget.
 */
export class ResourceReads<Item, ListQuery extends ListQueryDto, Upserted> {
  constructor(
    private readonly statements: ResourceStatements,
    private readonly database: Database,
    private readonly cursors: ChangeCursors,
    private readonly bodies: BodyBudget,
    private readonly streams: ChangeStreams,
  ) {}

  /** A page of the workspace's items, hottest first, ties by id so that paging is stable. */
  list(workspaceId: string, query: ListQuery): Promise<VersionedJson<Page<Item>>> {
    const { feed, list } = this.statements;
    return listPage(this.database.forWorkspace(workspaceId), list, workspaceId, query, {
      budget: this.bodies,
      key: `${feed}:${workspaceId}`,
    });
  }

  /** One item of the workspace; 404 when the id is not one of its items, whether or not it exists. */
  async get(workspaceId: string, id: string): Promise<VersionedJson<Item>> {
    const database = this.database.forWorkspace(workspaceId);
    const body = await itemById<Item>(database, this.statements.item, workspaceId, id);
    if (body === null) throw new NotFoundException();
    return body;
  }

  /** A page of the workspace's change feed after the query's cursor. */
  changes(
    workspaceId: string,
    query: ChangesQueryDto,
  ): Promise<JsonText<ChangePage<Upserted | ItemDeletedDto>>> {
    const { feed, changes } = this.statements;
    return changeFeedPage(
      this.database.forWorkspace(workspaceId),
      this.cursors,
      changes,
      feed,
      workspaceId,
      query,
      { budget: this.bodies, key: `${feed}/changes:${workspaceId}` },
    );
  }

  /** The workspace's change feed after the query's cursor, streamed to the response. */
  stream(
    workspaceId: string,
    query: ChangeStreamQueryDto,
    request: Request,
    response: Response,
  ): Promise<void> {
    const { feed, stream } = this.statements;
    const database = this.database.forWorkspace(workspaceId);
    return this.streams.stream(
      { feed, ...stream },
      database,
      this.bodies,
      workspaceId,
      query.cursor,
      request,
      response,
    );
  }
}
