import { Pool } from 'pg';
import { handleConnectionErrors, poolConfig } from '../../../src/database/pool-config';
import { createTestDatabase, withServer, type TestDatabase } from '../../support/database';

/*
 * A connection the database ends while a client of the pool holds it between two statements (a
 * transaction of the webhook worker during an outage): its error event must not end the process;
 * the next statement fails instead. Without handleConnectionErrors the event has no listener, and
 * jest reports it as an unhandled error of this test.
 */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

it('a checked-out connection ended by the database fails its next statement, nothing more', async () => {
  const reported: Error[] = [];
  const pool = new Pool(poolConfig(database.directUrl, 'startup', 2));
  handleConnectionErrors(pool, (error) => reported.push(error));
  const client = await pool.connect();
  try {
    const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    const ended = new Promise((resolve) => client.once('end', resolve));
    await withServer((server) => server.query('SELECT pg_terminate_backend($1)', [pid]));
    await ended;
    await expect(client.query('SELECT 1')).rejects.toThrow();
  } finally {
    client.release(true);
  }
  // The pool goes on with a new connection.
  const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
  expect(rows).toEqual([{ one: 1 }]);
  await pool.end();
});
