import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { Prisma, type Plan } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';

/** A workspace as the admin tool shows it. */
export interface WorkspaceView {
  id: string;
  name: string;
  plan: Plan;
  suspended: boolean;
}

export interface WorkspaceChanges {
  name?: string;
  plan?: Plan;
  suspended?: boolean;
}

const workspaceSelect = {
  id: true,
  name: true,
  plan: true,
  suspended: true,
} satisfies Prisma.WorkspaceSelect;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const GENERATED_ID_LENGTH = 16;

/** Workspaces are the customer accounts: created, changed and listed by the operator. */
@Injectable()
export class WorkspacesService {
  constructor(private readonly prisma: PrismaService) {}

  /** A new workspace; `id` is generated (`ws_` + base62) unless given, and never reused. */
  async create(input: { name: string; plan: Plan; id?: string }): Promise<WorkspaceView> {
    const id = input.id ?? generateWorkspaceId();
    const existing = await this.prisma.workspace.findUnique({
      where: { id },
      select: { id: true },
    });
    if (existing) throw alreadyExists(id);
    try {
      return await this.prisma.workspace.create({
        data: { id, name: input.name, plan: input.plan },
        select: workspaceSelect,
      });
    } catch (error) {
      // Created by someone else between the check and the insert.
      if (isUniqueViolation(error)) throw alreadyExists(id);
      throw error;
    }
  }

  /**
   * One statement: a workspace deleted between a read and the write (as a check-then-update did)
   * is the same not-found error as one that never existed, not Prisma's raw P2025.
   */
  async update(id: string, changes: WorkspaceChanges): Promise<WorkspaceView> {
    try {
      return await this.prisma.workspace.update({
        where: { id },
        data: changes,
        select: workspaceSelect,
      });
    } catch (error) {
      if (isRecordNotFound(error)) throw notFound(id);
      throw error;
    }
  }

  /** Creates the workspace or brings an existing one back to exactly these values. */
  async createOrReset(workspace: WorkspaceView): Promise<WorkspaceView> {
    const { id, ...values } = workspace;
    return this.prisma.workspace.upsert({
      where: { id },
      create: workspace,
      update: values,
      select: workspaceSelect,
    });
  }

  async list(): Promise<WorkspaceView[]> {
    return this.prisma.workspace.findMany({
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: workspaceSelect,
    });
  }
}

export function generateWorkspaceId(): string {
  let id = 'ws_';
  for (let i = 0; i < GENERATED_ID_LENGTH; i++) id += BASE62[randomInt(BASE62.length)];
  return id;
}

function notFound(id: string): NotFoundException {
  return new NotFoundException(`workspace ${id} does not exist`);
}

function alreadyExists(id: string): ConflictException {
  return new ConflictException(`workspace ${id} already exists`);
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/** P2025: the row an update or delete named does not exist (any longer). */
function isRecordNotFound(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025';
}
