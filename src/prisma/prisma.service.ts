import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { Database } from '../database/database';
import { PrismaClient } from '../generated/prisma/client';

/**
 * Prisma, for the admin tool and the import only, on the application's pool (the Database
 * provider owns and closes it). The server does not import this module: see src/database.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(database: Database) {
    super({ adapter: new PrismaPg(database.pool) });
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}
