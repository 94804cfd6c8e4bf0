import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The README's Docker section is what a newcomer runs: its export lines must be every variable
 * the compose files require (`${NAME:?message}`), and every `docker compose exec|run` it or the
 * docs write must name a service of docker-compose.yml, the worker for the `webhook` commands
 * (the only service with WEBHOOK_SECRET_KEY). No engine needed: .ci/run also resolves the
 * compose file with the README's export lines alone (`docker compose config`).
 */
const ROOT = join(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const README = read('README.md');
const COMPOSE = read('docker-compose.yml');

function dockerSection(): string {
  const start = README.indexOf('\n### Docker\n');
  const end = README.indexOf('\n### ', start + 1);
  expect(start).toBeGreaterThan(0);
  return README.slice(start, end);
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
  const texts = [README, read('docs/changes.md'), read('docs/scaling.md'), read('docs/api.md')];
  return texts.flatMap((text) =>
    [...text.matchAll(/docker compose (?:exec|run)((?: --?[a-z-]+)*) ([a-z0-9-]+)([^`\n]*)/g)].map(
      (match) => ({ line: match[0], service: match[2] }),
    ),
  );
}

it('exports, in its Docker section, every variable the compose files require', () => {
  const exported = [...dockerSection().matchAll(/^export (\w+)=/gm)].map((match) => match[1]);
  const required = requiredVariables(COMPOSE + read('docker-compose.pgbouncer.yml'));
  expect(required).toEqual(['API_KEY_SECRET', 'POSTGRES_PASSWORD', 'WEBHOOK_SECRET_KEY']);
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
    expect([file, read(file).match(/postgres:postgres@|POSTGRES_PASSWORD: [a-z]/g)]).toEqual([
      file,
      null,
    ]);
  }
});
