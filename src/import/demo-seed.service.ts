import { Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import { ApiKeyAdminService } from '../workspaces/api-key-admin.service';
import { Clock } from '../common/clock';
import { type WorkspaceView, WorkspacesService } from '../workspaces/workspaces.service';
import { buildDemoData } from './demo-data';
import { buildDemoVisits } from './demo-visits';
import { type ImportCounts, ImportService } from './import.service';
import { type VisitImportCounts, VisitImportService } from './visit-import.service';

export const DEMO_WORKSPACE: WorkspaceView = {
  id: 'demo',
  name: 'Demo workspace',
  plan: 'growth',
  suspended: false,
};
export const DEMO_KEY_NAME = 'Demo key';

export interface DemoSeed {
  workspace: WorkspaceView;
  /** The full value of the new key, shown once. */
  key: string;
  counts: ImportCounts;
  visits: VisitImportCounts;
}

/**
 * `seed --demo`: the demo workspace, its data through the same imports as any file (companies and
 * leads, then visits), and a new key.
 * Re-running refreshes the same workspace and records (same ids) and adds one more key.
 */
@Injectable()
export class DemoSeedService {
  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly importer: ImportService,
    private readonly visitImporter: VisitImportService,
    private readonly keys: ApiKeyAdminService,
    private readonly clock: Clock,
  ) {}

  async seed(): Promise<DemoSeed> {
    const workspace = await this.workspaces.createOrReset(DEMO_WORKSPACE);
    const now = this.clock.now();
    const data = buildDemoData(now);
    const counts = await this.importer.import(workspace.id, data);
    const lines = buildDemoVisits(data.companies, now).map((visit) => `${JSON.stringify(visit)}\n`);
    const visits = await this.visitImporter.import(workspace.id, Readable.from(lines));
    const { key } = await this.keys.create(workspace.id, DEMO_KEY_NAME);
    return { workspace, key, counts, visits };
  }
}
