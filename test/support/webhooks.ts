import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../src/common/clock';
import {
  handleConnectionErrors,
  poolConfig,
  sessionSettingsSource,
} from '../../src/database/pool-config';
import { WebhookWorker, type WebhookWorkerOptions } from '../../src/worker/webhook-worker';

/** The key the tests seal secrets under (WEBHOOK_SECRET_KEY). */
export const TEST_SECRET_KEY_HEX = 'a1'.repeat(32);

/** Environment of the admin tool's `webhook` commands in tests: receivers are plain http. */
export const WEBHOOK_ENV = { WEBHOOK_SECRET_KEY: TEST_SECRET_KEY_HEX, WEBHOOK_ALLOW_HTTP: 'true' };

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The answer's status; undefined while it is held or when never answered. */
  status?: number;
}

/** How a receiver answers its nth request (0-based): a status, or `hold` (never answers). */
export type Answer = number | 'hold';

/**
 * A real receiver on 127.0.0.1 (node:http). `answer` decides each request's fate; every request
 * is kept, with how many of each webhook-id were being handled at once at most.
 */
export class Receiver {
  readonly requests: Received[] = [];
  /** The most requests with one webhook-id in flight at the same time. */
  maxConcurrentPerId = 0;
  private readonly inFlight = new Map<string, number>();
  private readonly held: ServerResponse[] = [];
  private server?: Server;

  constructor(
    private answer: (n: number, received: Received) => Answer | Promise<Answer> = () => 200,
  ) {}

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: Received = {
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const n = this.requests.push(received) - 1;
        const id = String(request.headers['webhook-id']);
        const now = (this.inFlight.get(id) ?? 0) + 1;
        this.inFlight.set(id, now);
        this.maxConcurrentPerId = Math.max(this.maxConcurrentPerId, now);
        void Promise.resolve(this.answer(n, received)).then((answer) => {
          if (answer === 'hold') {
            this.held.push(response);
            return;
          }
          received.status = answer;
          this.inFlight.set(id, (this.inFlight.get(id) ?? 1) - 1);
          response.writeHead(answer, { 'content-type': 'text/plain' }).end(`answer ${answer}`);
        });
      });
    });
    // Longer than the worker's agent keeps an idle socket (30 s): with Node's default of 5 s, the
    // agent keeps it 4 s (the server's hint less a second), and a stall of the process longer than
    // that second could send a delivery on a socket this server is closing.
    this.server.keepAliveTimeout = 120_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  setAnswer(answer: (n: number, received: Received) => Answer | Promise<Answer>): void {
    this.answer = answer;
  }

  /** The bodies received, parsed. */
  events(): { id: string; type: string; createdAt: string; data: Record<string, unknown> }[] {
    return this.requests.map((r) => JSON.parse(r.body) as never);
  }

  async stop(): Promise<void> {
    for (const response of this.held) response.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/**
 * Verifies a request with the `standardwebhooks` package (the scheme's published implementation,
 * not ours), as a receiver whose clock reads `nowMs` would. Throws when no signature matches.
 */
export function verifyWith(secret: string, received: Received, nowMs = Date.now()): unknown {
  const realNow = Date.now;
  Date.now = () => nowMs;
  try {
    return new Webhook(secret).verify(received.body, received.headers as Record<string, string>);
  } finally {
    Date.now = realNow;
  }
}

/** A worker in this process on the test's database, fast-paced for tests. */
export function testWorker(
  databaseUrl: string,
  options: Partial<WebhookWorkerOptions> & { clock?: Clock } = {},
): WebhookWorker {
  // The pool the worker process takes from its Database (the same settings), ended with the
  // worker; through PgBouncer when the suite runs behind it (.ci/pgbouncer-suite).
  const pool = new Pool(
    poolConfig(databaseUrl, sessionSettingsSource(process.env.DATABASE_POOLER)),
  );
  // As the Database's pools do (a test's outage ends the connections); it logs the idle ones.
  handleConnectionErrors(pool, () => undefined);
  const worker = new WebhookWorker({
    pool,
    databaseUrl,
    secretKey: Buffer.from(TEST_SECRET_KEY_HEX, 'hex'),
    allowPrivateNetworks: true,
    allowHttp: true,
    logger: pino({ level: 'silent' }),
    timeoutMs: 2_000,
    dispatchIntervalMs: 50,
    maxJobWaitSeconds: 1,
    ...options,
  });
  const stop = worker.stop.bind(worker);
  worker.stop = async () => {
    await stop();
    await pool.end();
  };
  return worker;
}
