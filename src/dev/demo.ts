import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApp } from '../app.setup';
import { runAdmin } from '../cli/run-admin';
import { Environment } from '../config/environment';
import { isMissingDatabase, missingDatabase } from '../database/database-errors';
import { applyMigrations } from '../database/migrator';
import { stdoutLog } from '../logging/stdout-log';
import { keptDemoSecret } from './demo-secret';
import { startServer } from '../server/start-server';
import { exitOnSignalUntilServing } from '../server/start-signals';
import {
  type EmbeddedDatabase,
  leaveSignalsToTheCaller,
  startEmbeddedPostgres,
} from './embedded-postgres';

/**
 * The quick start: a database (DATABASE_URL, or an embedded PostgreSQL of its own), migrated,
 * with the demo workspace seeded, and the API served as production serves it (startServer:
 * timeouts, logs, graceful shutdown); prints a working key and a curl line. On Ctrl-C or SIGTERM
 * the server drains and closes its pools, then the embedded PostgreSQL stops, its folder is
 * removed, and a line says so.
 */
async function demo(): Promise<void> {
  // Where DATABASE_URL comes from, for the sentence that says what to do when it does not work.
  const source = process.env.DATABASE_URL ? 'the environment' : '.env';
  if (existsSync('.env')) process.loadEnvFile('.env');
  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres('demo-postgres');
  process.env.DATABASE_URL ??= embedded?.url;
  // On the embedded database a throwaway secret is fine: its keys live only as long as it does. On
  // yours, the demo keeps the secret it made, so that its keys still work on the next run.
  const kept =
    process.env.API_KEY_SECRET || embedded ? undefined : keptDemoSecret(KEPT_SECRET_FILE);
  const generatedSecret = process.env.API_KEY_SECRET
    ? undefined
    : (process.env.API_KEY_SECRET = kept?.secret ?? randomBytes(32).toString('base64url'));

  let app: NestExpressApplication | undefined;
  try {
    await applyMigrations({
      databaseUrl: process.env.DATABASE_URL ?? '',
      migrationsDir: join(__dirname, '..', '..', 'prisma', 'migrations'),
      log: (line) => console.log(line),
    });
    const key = await seedDemoWorkspace();
    // The server's JSON logs (LOG_LEVEL, default info), one line per request you make, from
    // startServer on: Nest's first lines are held until then.
    app = await createApp({ bufferLogs: true });
    // From here a signal is the server's (graceful-shutdown.ts), which stops the database last;
    // until it listens, a signal exits at once, and exiting stops the database.
    exitOnSignalUntilServing();
    leaveSignalsToTheCaller();
    // A port in use is said in words that name PORT (e.g. `PORT=3001 npm run demo`).
    await startServer(app, { afterClose: embedded ? () => stopDatabase(embedded) : undefined });
    const { PORT } = app.get(Environment);

    say(`
The API is listening on http://localhost:${PORT}${embedded ? ' (embedded PostgreSQL)' : ''}.
Demo workspace key (shown once): ${key}

  export KEY=${key}
  curl -s -H "Authorization: Bearer $KEY" "http://localhost:${PORT}/v1/companies?limit=2"

The reference, in a browser: http://localhost:${PORT}/docs (the OpenAPI document: /v1/openapi.json).
${kept ? `\n${keptSecretLine(kept.made)}\n` : ''}
The admin tool on this demo's database (keys, import, webhooks), from another terminal here:

${adminToolLines(embedded?.url, generatedSecret)}
Stop with Ctrl-C.`);
  } catch (error) {
    // Its pools first, so that the database stops with no connection to cut.
    await app?.close();
    await embedded?.stop();
    if (!embedded && isMissingDatabase(error)) {
      throw new Error(
        missingDatabase(process.env.DATABASE_URL ?? '', {
          variable: 'DATABASE_URL',
          source,
          otherwise:
            'unset DATABASE_URL (remove it from .env) to run the demo on an embedded PostgreSQL',
        }),
      );
    }
    throw error;
  }
}

/**
 * What the admin tool needs to work on the demo's data: its database and the secret its keys are
 * made with. Printed only when the demo made them up (the embedded database, a throwaway secret,
 * both gone when it stops); yours are not echoed.
 */
function adminToolLines(embeddedUrl: string | undefined, generatedSecret: string | undefined) {
  const database = embeddedUrl
    ? `  export DATABASE_URL='${embeddedUrl}'`
    : '  # DATABASE_URL: the one this demo runs with (yours)';
  const secret = generatedSecret
    ? `  export API_KEY_SECRET='${generatedSecret}'`
    : '  # API_KEY_SECRET: the one this demo runs with (yours)';
  return `${database}\n${secret}\n  npm run -s admin -- workspace list\n`;
}

/** Where a demo on your DATABASE_URL keeps its API_KEY_SECRET (.data/ is not committed). */
const KEPT_SECRET_FILE = join('.data', 'demo-api-key-secret');

function keptSecretLine(made: boolean): string {
  return (
    `API_KEY_SECRET is not set: the demo ${made ? 'made one and keeps it' : 'uses the one it keeps'} ` +
    `in ${KEPT_SECRET_FILE}, so the keys it makes on your database keep working from run to run ` +
    '(set API_KEY_SECRET to use your own).'
  );
}

/** A line of the demo's own, in order with the server's log lines (held in one buffer). */
function say(text: string): void {
  stdoutLog().write(`${text}\n`);
}

async function stopDatabase(embedded: EmbeddedDatabase): Promise<void> {
  await embedded.stop();
  say(
    `The demo stopped its embedded PostgreSQL and removed its folder, ${relative(process.cwd(), embedded.dataDir)}.`,
  );
}

async function seedDemoWorkspace(): Promise<string> {
  let output = '';
  const code = await runAdmin(['seed', '--demo', '--json'], {
    stdout: (text) => (output += text),
    stderr: (text) => process.stderr.write(text),
  });
  if (code !== 0) throw new Error('Seeding the demo workspace failed');
  return (JSON.parse(output) as { key: string }).key;
}

demo().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
