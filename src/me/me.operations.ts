import type { ReadOperation } from '../items/json-read.decorator';
import { WorkspaceDto } from './dto/workspace.dto';

/** The key check as the OpenAPI document states it (MeController). */
export const GET_ME: ReadOperation = {
  operationId: 'getMe',
  summary: 'Check a key',
  description:
    'Confirms that the key is valid and names the workspace it targets; no business data. ' +
    'Takes no parameter: any is a 400.',
  ok: WorkspaceDto,
  okDescription: 'The key is valid and targets this workspace.',
};
