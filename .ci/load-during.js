// Requests on kept-alive connections while a command stops or kills a server, for .ci/container:
//   node .ci/load-during.js <base url> <api key> <expectation> <command...>
// Expectations:
//   drain: the command stops the server itself (SIGTERM). Requests held in it on a table lock
//     (the database as DATABASE_URL says) when the command starts are answered 200 with
//     `Connection: close`; no request gets another status or a cut answer; the only failures are
//     refused or reset connections after the command started (the server is gone). The held
//     requests use HOLDER_KEY, a key of another workspace than the load's: a workspace holds at
//     most 3 of the 10 database connections, and each held request holds one while it waits, so
//     the load's own statements would wait behind them (and the server would be right to shed
//     them). The server must run with an in-flight limit above WORKERS (its default is 20).
//   no-loss: the command kills one instance behind the proxy; every request is answered, 200 or
//     429 (the key's limit, counted across the instances), never a proxy error: the proxy retries
//     on the other instance what the dead one did not answer.
// Prints a summary line; exits 1 when the expectation fails.
'use strict';
const { spawn } = require('node:child_process');
const { Agent, request } = require('node:http');
const { connect } = require('node:net');
const { Client } = require('pg');

const [base, key, expectation, ...command] = process.argv.slice(2);
const holderKey = process.env.HOLDER_KEY ?? key;
const WORKERS = 50;
const HELD = 3;
const CLIENT_TIMEOUT_MS = 15_000;
let commandStarted = false;

function get(agent, path, bearer = key) {
  return new Promise((resolve) => {
    const call = request(
      new URL(path, base),
      { agent, headers: { Authorization: `Bearer ${bearer}` } },
      (response) => {
        response.resume();
        response.on('error', (error) => resolve({ error: error.code ?? error.message }));
        response.on('end', () =>
          resolve({ status: response.statusCode, connection: response.headers.connection }),
        );
      },
    );
    call.setTimeout(CLIENT_TIMEOUT_MS, () => call.destroy(new Error('client timeout')));
    call.on('error', (error) =>
      resolve({ error: error.code ?? error.message, afterCommand: commandStarted }),
    );
    call.end();
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once a new connection to the URL's port is refused, or after `withinMs`. */
async function listenerClosed(url, withinMs) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const refused = await new Promise((resolve) => {
      const socket = connect(Number(url.port), url.hostname);
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    if (refused) return;
    await sleep(20);
  }
}

async function main() {
  const load = new Agent({ keepAlive: true, maxSockets: WORKERS });
  const outcomes = [];
  let stop = false;
  const workers = Array.from({ length: WORKERS }, async () => {
    while (!stop) {
      const outcome = await get(load, '/v1/companies?limit=5');
      outcomes.push(outcome);
      // A server gone (drain): this worker is done.
      if (outcome.error && expectation === 'drain') return;
    }
  });
  while (outcomes.length < 3 * WORKERS) await sleep(20);

  let locker;
  let held = [];
  if (expectation === 'drain') {
    locker = new Client({ connectionString: process.env.DATABASE_URL });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE leads IN ACCESS EXCLUSIVE MODE');
    const heldAgent = new Agent({ keepAlive: true });
    held = Array.from({ length: HELD }, () => get(heldAgent, '/v1/leads', holderKey));
    // Watched from a connection of its own, a statement at a time: inside the locker's
    // transaction, pg_stat_activity keeps the view of its first read (PostgreSQL caches activity
    // statistics until the transaction ends), so a first read made before the held requests
    // reached the lock would be read again for ever.
    const watcher = new Client({ connectionString: process.env.DATABASE_URL });
    await watcher.connect();
    for (;;) {
      const { rows } = await watcher.query(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND datname = current_database()`,
      );
      if (rows[0].waiting >= HELD) break;
      await sleep(20);
    }
    await watcher.end();
  }

  commandStarted = true;
  const started = Date.now();
  const running = new Promise((resolve) => {
    // Its output only when it fails (podman stop prints the name, and complains without systemd).
    const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => {
      if (code !== 0) process.stderr.write(output);
      resolve({ code, seconds: (Date.now() - started) / 1000 });
    });
  });
  if (locker) {
    // The held requests stay in flight until the server has begun its drain (it closes its
    // listener first: a new connection is refused), then their lock goes. Waiting a fixed time
    // instead raced the signal on a loaded machine: a lock released before the SIGTERM arrived
    // let the held requests be answered as any other, kept alive.
    await listenerClosed(new URL(base), 30_000);
    await sleep(200);
    await locker.query('ROLLBACK');
    await locker.end();
  } else {
    // Load on the survivor for a while after the kill.
    await sleep(2000);
  }
  const ran = await running;
  const heldOutcomes = await Promise.all(held);
  stop = true;
  await Promise.all(workers);
  load.destroy();

  const failures = [];
  if (ran.code !== 0) failures.push(`the command exited ${ran.code}`);
  for (const outcome of heldOutcomes) {
    if (outcome.status !== 200 || outcome.connection !== 'close')
      failures.push(`a request in flight at the stop: ${JSON.stringify(outcome)}`);
  }
  const statuses = outcomes.filter((outcome) => outcome.status !== undefined);
  const errors = outcomes.filter((outcome) => outcome.status === undefined);
  const answered = expectation === 'no-loss' ? [200, 429] : [200];
  for (const outcome of statuses) {
    if (!answered.includes(outcome.status)) failures.push(`answered ${outcome.status}`);
  }
  for (const outcome of errors) {
    const tolerated =
      expectation === 'drain' &&
      outcome.afterCommand &&
      ['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(outcome.error);
    if (!tolerated) failures.push(`failed: ${JSON.stringify(outcome)}`);
  }
  console.log(
    `    ${outcomes.length + heldOutcomes.length} requests, ${statuses.length + heldOutcomes.length} answered, ` +
      `${errors.length} refused or reset after the command; \`${command.join(' ')}\` took ${ran.seconds.toFixed(1)} s`,
  );
  if (failures.length > 0) {
    console.error([...new Set(failures)].slice(0, 20).join('\n'));
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
