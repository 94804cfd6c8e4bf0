import { Param, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { StreamRead } from '../changes/stream/stream-read.decorator';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { JsonRead, ReadController } from '../items/json-read.decorator';
import {
  CompanyVisitListQueryDto,
  VisitChangesQueryDto,
  VisitChangeStreamQueryDto,
  VisitListQueryDto,
  VisitQueryDto,
} from './dto/visit-read-queries.dto';
import {
  GET_VISIT,
  LIST_COMPANY_VISITS,
  LIST_VISITS,
  VISIT_CHANGE_STREAM,
  VISIT_CHANGES,
} from './visits.operations';
import { VisitsService } from './visits.service';

/** Each read is one call of the service, which returns the body PostgreSQL wrote. */
@ReadController('v1', 'visits')
export class VisitsController {
  constructor(private readonly visits: VisitsService) {}

  @JsonRead('visits', LIST_VISITS)
  listVisits(@Workspace() workspace: AuthenticatedWorkspace, @Query() query: VisitListQueryDto) {
    return this.visits.list(workspace.id, query);
  }

  // Declared before `visits/:id`, which would otherwise take `changes` for an id.
  @JsonRead('visits/changes', VISIT_CHANGES)
  visitChanges(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: VisitChangesQueryDto,
  ) {
    return this.visits.changes(workspace.id, query);
  }

  // Answers itself (@Res): lines as they are read, not one body.
  @StreamRead('visits/changes/stream', VISIT_CHANGE_STREAM)
  visitChangeStream(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: VisitChangeStreamQueryDto,
    @Req() request: Request,
    @Res() response: Response,
  ) {
    return this.visits.stream(workspace.id, query, request, response);
  }

  @JsonRead('visits/:id', GET_VISIT)
  getVisit(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Param('id') id: string,
    @Query() query: VisitQueryDto,
  ) {
    return this.visits.get(workspace.id, id, query.fields);
  }

  @JsonRead('companies/:id/visits', LIST_COMPANY_VISITS)
  listCompanyVisits(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Param('id') id: string,
    @Query() query: CompanyVisitListQueryDto,
  ) {
    return this.visits.listOfCompany(workspace.id, id, query);
  }
}
