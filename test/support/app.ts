import { INestApplication } from '@nestjs/common';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from '../../src/app.module';
import { APP_OPTIONS, configureApp, createHttpAdapter } from '../../src/app.setup';
import { Clock } from '../../src/common/clock';
import type { Environment } from '../../src/config/environment';
import { Database } from '../../src/database/database';
import { buildOpenApiDocument } from '../../src/openapi/openapi';
import { PrismaService } from '../../src/prisma/prisma.service';
import { createTestDatabase, type TestDatabase } from './database';
import { listenOnLoopback } from './raw-http';
import { installContractCheck } from './openapi-contract';

/** How long the tests' own pool waits to open a connection (below). */
const TEST_CONNECTION_WAIT_MS = 30_000;

/** A clock the test moves by hand: rate-limit windows end without sleeping. */
export class ManualClock extends Clock {
  constructor(private current = Date.parse('2026-03-01T09:00:00.000Z')) {
    super();
  }
  override now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export interface TestApp {
  app: INestApplication;
  prisma: PrismaService;
  clock: ManualClock;
  database: TestDatabase;
  close(): Promise<void>;
}

/**
 * The real AppModule (same guards, pipe, filter and middleware as production) on a database of
 * its own, with a manual clock. `env` overrides environment variables for this app only.
 */
export async function createTestApp(
  options: {
    env?: Record<string, string>;
    customize?: (builder: TestingModuleBuilder) => void;
    /** Another app's database, for a second instance of the service; its owner drops it. */
    database?: TestDatabase;
  } = {},
): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const saved = { ...process.env };
  Object.assign(process.env, { DATABASE_URL: database.url, ...options.env });
  try {
    const clock = new ManualClock();
    const builder = Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(Clock)
      .useValue(clock);
    options.customize?.(builder);
    const moduleRef = await builder.compile();
    const app = configureApp(
      moduleRef.createNestApplication<NestExpressApplication>(createHttpAdapter(), {
        ...APP_OPTIONS,
        logger: false,
      }),
    );
    // Before init, that is before Nest's router: every response of every e2e test is checked
    // against the published OpenAPI document (a mismatch fails the test: contract-check.ts).
    installContractCheck(app, buildOpenApiDocument(app));
    await app.init();
    // The tests' own writes go through Prisma on a pool of their own: the server has no Prisma.
    const testDatabase = new Database({
      DATABASE_URL: process.env.DATABASE_URL,
      DATABASE_POOLER: process.env.DATABASE_POOLER ?? 'none',
    } as Environment);
    // The service's bound on opening a connection (CONNECTION_WAIT_MS, 1 s) is the service's
    // answer to an overloaded database; the tests' own writes are not what a test measures, and
    // on a machine running a second suite beside this one a connection took longer than that.
    for (const pool of [testDatabase.pool, testDatabase.priorityPool]) {
      pool.options.connectionTimeoutMillis = TEST_CONNECTION_WAIT_MS;
    }
    const prisma = new PrismaService(testDatabase);
    return {
      app,
      prisma,
      clock,
      database,
      close: async () => {
        await app.close();
        await prisma.$disconnect();
        await testDatabase.onModuleDestroy();
        if (!options.database) await database.drop();
      },
    };
  } finally {
    process.env = saved;
  }
}

/** Starts the app on a loopback port of the OS's choosing and resolves to its base URL. */
export async function listening(t: TestApp): Promise<string> {
  return `http://127.0.0.1:${await listenOnLoopback(t.app)}`;
}
