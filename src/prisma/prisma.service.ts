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
      // - TimeZone: the adapter sends and reads timestamps without an offset; in a session whose
      //   zone is not UTC, every instant would be shifted by it.
      // - extra_float_digits: PostgreSQL writes the lists' JSON, and scores must come out exactly
      //   as stored (1 is the shortest exact form; a server set to 0 would round them).
      // - jit: compiling a plan costs tens of milliseconds, more than any of these queries runs.
      options: '-c TimeZone=UTC -c extra_float_digits=1 -c jit=off',
    });
    super({ adapter });
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}
