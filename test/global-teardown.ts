import { withServer } from './support/database';

export default async function globalTeardown(): Promise<void> {
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (process.env.TEST_SERVER_URL && template) {
    await withServer(async (client) => {
      // The template, and the databases of test files that crashed before dropping their own.
      const { rows } = await client.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
        [`test_${process.env.TEST_RUN_ID}_`],
      );
      for (const { datname } of rows) {
        await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      }
    });
  }
  // Once per run, as the setup (each project that ran calls it).
  delete process.env.TEST_TEMPLATE_DATABASE;
  await globalThis.embeddedTestDatabase?.stop();
  globalThis.embeddedTestDatabase = undefined;
}
