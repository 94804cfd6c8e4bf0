import { NotFoundException } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import type { PrismaService } from '../prisma/prisma.service';
import { WorkspacesService } from './workspaces.service';

/*
 * `workspace update` racing a delete: the workspace is there when the command starts and gone
 * when its write runs. The fake database answers as PostgreSQL would at each step: a read sees
 * the workspace, the update finds no row (P2025).
 */
function deletedDuringUpdate(): PrismaService {
  const gone = new Prisma.PrismaClientKnownRequestError('No record was found for an update.', {
    code: 'P2025',
    clientVersion: Prisma.prismaVersion.client,
  });
  return {
    workspace: {
      findUnique: () => Promise.resolve({ id: 'ws_racing' }),
      update: () => Promise.reject(gone),
    },
  } as unknown as PrismaService;
}

it('update of a workspace deleted meanwhile is the not-found error, not the raw P2025', async () => {
  const workspaces = new WorkspacesService(deletedDuringUpdate());

  const failure = await workspaces
    .update('ws_racing', { name: 'X' })
    .catch((error: unknown) => error);

  expect(failure).toBeInstanceOf(NotFoundException);
  expect((failure as Error).message).toBe('workspace ws_racing does not exist');
});

it('update passes any other database failure on', async () => {
  const broken = new Error('connection lost');
  const prisma = {
    workspace: { update: () => Promise.reject(broken) },
  } as unknown as PrismaService;

  await expect(new WorkspacesService(prisma).update('ws_1', { name: 'X' })).rejects.toBe(broken);
});
