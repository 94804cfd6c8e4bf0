import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The Docker section of docs/operations.md is what a newcomer runs: its export lines must be every
 * variable the compose files require (`${NAME:?message}`), and every `docker compose exec|run`
 * that the README or a page of docs/ writes must name a service of docker-compose.yml, the worker
 * for the `webhook` commands (the only service with WEBHOOK_SECRET_KEY). No engine needed:
 * .ci/run also resolves the compose file with the section's export lines alone
 * (`docker compose config`).
 */
const ROOT = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const OPERATIONS = read('docs/operations.md');
const COMPOSE = read('docker-compose.yml');

/** From `### Docker` to the next heading of its level, as .ci/run's sed reads it. */
function dockerSection(): string {
  const start = OPERATIONS.indexOf('\n### Docker\n');
  const end = OPERATIONS.indexOf('\n### ', start + 1);
  expect(start).toBeGreaterThan(0);
  expect(OPERATIONS.slice(end + 1)).toMatch(/^### Several/);
  return OPERATIONS.slice(start, end);
}

function requiredVariables(compose: string): string[] {
  return [...new Set([...compose.matchAll(/\$\{(\w+):\?/g)].map((match) => match[1]))].sort();
}

function services(): string[] {
  const block = COMPOSE.slice(COMPOSE.indexOf('\nservices:\n'));
  return [...block.matchAll(/^ {2}([a-z0-9-]+):/gm)].map((match) => match[1]);
}

/** Every `docker compose exec|run` command of the README and docs/, with its service. */
function composeCommands(): { line: string; service: string }[] {
  const pages = readdirSync(join(ROOT, 'docs')).filter((file) => file.endsWith('.md'));
  const texts = ['README.md', ...pages.map((page) => `docs/${page}`)].map(read);
  return texts.flatMap((text) =>
    [...text.matchAll(/docker compose (?:exec|run)((?: --?[a-z-]+)*) ([a-z0-9-]+)([^`\n]*)/g)].map(
      (match) => ({ line: match[0], service: match[2] }),
    ),
  );
}

it('exports, in its Docker section, every variable the compose files require', () => {
  const exported = [...dockerSection().matchAll(/^export (\w+)=/gm)].map((match) => match[1]);
  const required = requiredVariables(COMPOSE + read('docker-compose.pgbouncer.yml'));
  expect(required).toEqual([
    'API_KEY_SECRET',
    'API_ROLE_PASSWORD',
    'POSTGRES_PASSWORD',
    'WEBHOOK_SECRET_KEY',
  ]);
  expect(exported.sort()).toEqual(required);
});

it('writes its compose commands against services of the compose file, webhooks in the worker', () => {
  const commands = composeCommands();
  expect(commands.length).toBeGreaterThanOrEqual(3);
  for (const { line, service } of commands) {
    expect([line, services()]).toEqual([line, expect.arrayContaining([service])]);
    if (/ webhook /.test(line)) expect([line, service]).toEqual([line, 'worker']);
  }
  // The worker is the service that has the key the webhook commands need.
  const worker = COMPOSE.slice(COMPOSE.indexOf('\n  worker:\n'));
  expect(worker.slice(0, worker.indexOf('\n  proxy:'))).toContain('WEBHOOK_SECRET_KEY:');
});

it('hard-codes no database password in the compose files', () => {
  for (const file of ['docker-compose.yml', 'docker-compose.pgbouncer.yml']) {
    expect([file, read(file).match(/:\/\/\w+:\w+@|(?:POSTGRES|DB)_PASSWORD: [a-z]/g)]).toEqual([
      file,
      null,
    ]);
  }
});

it("gives the compose file's PostgreSQL the allocator settings docs/scaling.md states", () => {
  const postgres = COMPOSE.slice(COMPOSE.indexOf('\n  postgres:\n'));
  const service = postgres.slice(0, postgres.indexOf('\n  redis:'));
  const scaling = read('docs/scaling.md');
  for (const name of ['MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_']) {
    const value = new RegExp(`\\n {6}${name}: '(\\d+)'`).exec(service)?.[1];
    expect([name, value]).toEqual([name, '33554432']);
    expect(scaling).toContain(`${name}=${value}`);
  }
});
