import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { Environment } from '../config/environment';
import { PrismaClient } from '../generated/prisma/client';

@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(environment: Environment) {
    const adapter = new PrismaPg({
      connectionString: environment.DATABASE_URL,
      // Bounded waits, so that a database that is down or stuck gives a 503 in seconds rather
      // than requests that hang.
      connectionTimeoutMillis: 5_000,
      statement_timeout: 5_000,
      // The adapter sends and reads timestamps without an offset: in a session whose zone is not
      // UTC, every instant would be shifted by it.
      options: '-c TimeZone=UTC',
    });
    super({ adapter });
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}
