import { NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Database } from '../database/database';
import type { JsonText, VersionedJson } from '../http/json-text';
import type { ListQueryDto } from '../http/list-query.dto';
import type { BodyBudget } from '../items/body-budget';
import type { BySelection, Selection } from '../items/field-selection';
import type { FieldsQuery } from '../items/fields-query';
import type { ListContext } from '../items/filters';
import { listPage, type ListStatements } from '../items/list-page';
import type { Page } from '../items/page';
import type { ChangeCursors } from './change-cursor';
import { ChangeFeedPages, type ChangePage } from './change-feed';
import { itemById, itemSql } from '../items/item-sql';
import {
  changeBoundariesSql,
  changeFeedSql,
  type ChangeFeedSql,
  type Feed,
} from './change-feed-sql';
import type { ChangesQueryDto } from './changes-query.dto';
import type { ChangeStreamQueryDto } from './stream/change-stream-query.dto';
import type { ChangeStreams, StreamedFeed } from './stream/change-streams';
import type { ItemDeletedDto } from './dto/change.dto';

/** A resource's statements beyond its list, for one selection of fields (field-selection.ts). */
export interface SelectedStatements {
  /** One item of the workspace, or no row (item-sql.ts). */
  item: string;
  /** A page of its change feed (change-feed-sql.ts). */
  changes: string;
  /** Its change stream's statements (change-streams.ts). */
  stream: Omit<StreamedFeed, 'feed'>;
}

/** A resource's statements beyond its list, for one selection, from its feed's description. */
export function selectedStatements(feed: ChangeFeedSql): SelectedStatements {
  return {
    item: itemSql(feed),
    changes: changeFeedSql(feed),
    stream: {
      lines: changeFeedSql(feed, 'lines'),
      range: changeFeedSql(feed, 'lines', true),
      boundaries: changeBoundariesSql(feed),
    },
  };
}

/** What tells one resource's reads from another's: its feed's name and its statements. */
export interface ResourceStatements {
  feed: Feed;
  list: ListStatements;
  /** The others, per selection of fields: `whole` without one. */
  selected: BySelection<SelectedStatements>;
}

/**
 * The reads of a resource with a change feed (companies, leads): a page of the list, one item, a
 * page of the feed, the whole feed as a stream. Each statement runs in the workspace's turn
 * (Database.forWorkspace) and returns the body PostgreSQL wrote, read through the body budget.
 */
export class ResourceReads<Item, ListQuery extends ListQueryDto & FieldsQuery, Upserted> {
  private readonly feedPages: ChangeFeedPages;

  constructor(
    private readonly statements: ResourceStatements,
    private readonly database: Database,
    cursors: ChangeCursors,
    private readonly bodies: BodyBudget,
    private readonly streams: ChangeStreams,
    private readonly context: ListContext,
  ) {
    this.feedPages = new ChangeFeedPages(statements.feed, database, cursors, bodies);
  }

  /** A page of the workspace's items, hottest first, ties by id so that paging is stable. */
  list(
    workspaceId: string,
    query: ListQuery,
  ): Promise<VersionedJson<Page<Item>> | JsonText<Page<Item>>> {
    const { feed, list } = this.statements;
    return listPage(
      this.database.forWorkspace(workspaceId),
      list,
      workspaceId,
      query,
      { budget: this.bodies, key: `${feed}:${workspaceId}` },
      this.context,
    );
  }

  /** One item of the workspace; 404 when the id is not one of its items, whether or not it exists. */
  async get(workspaceId: string, id: string, fields?: Selection): Promise<VersionedJson<Item>> {
    const database = this.database.forWorkspace(workspaceId);
    const { item } = this.statements.selected.for(fields);
    const body = await itemById<Item>(database, item, workspaceId, id);
    if (body === null) throw new NotFoundException();
    return body;
  }

  /** A page of the workspace's change feed after the query's cursor. */
  changes(
    workspaceId: string,
    query: ChangesQueryDto & FieldsQuery,
  ): Promise<JsonText<ChangePage<Upserted | ItemDeletedDto>>> {
    const { changes } = this.statements.selected.for(query.fields);
    return this.feedPages.page(workspaceId, changes, query);
  }

  /** The workspace's change feed after the query's cursor, streamed to the response. */
  stream(
    workspaceId: string,
    query: ChangeStreamQueryDto & FieldsQuery,
    request: Request,
    response: Response,
  ): Promise<void> {
    const { feed, selected } = this.statements;
    const { stream } = selected.for(query.fields);
    return this.streams.stream({
      statements: { feed, ...stream },
      workspaceId,
      cursor: query.cursor,
      request,
      response,
    });
  }
}
