import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { findFreePort } from '../../src/dev/free-port';
import { type BuiltProcess, spawnBuilt } from '../support/built-process';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { describeNeeding, PROGRAMS } from '../support/programs';
import { TEST_REDIS_URL } from '../support/redis';
import { WEBHOOK_ENV } from '../support/webhooks';
import { until } from '../support/until';

/*
 * What ops load (docs/operations.md): the alerting and recording rules, their unit tests, the
 * compose profile's Prometheus configuration and the Grafana dashboard. Prometheus's own tool
 * checks and tests them; the metric names they use are read against what the built server and
 * the built webhook worker export on their METRICS_PORT, so that a renamed metric breaks the
 * build, not the pager.
 */
const ROOT = join(__dirname, '../..');
const PROMETHEUS = join(ROOT, 'deploy', 'prometheus');
const RULES = join(PROMETHEUS, 'rules.yml');
const RULE_TESTS = join(PROMETHEUS, 'rules.test.yml');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'visitor-api.json');
const RUNBOOK = join(ROOT, 'docs', 'operations.md');

// Exported only by a process whose container has a memory limit (src/metrics/memory-limit.ts;
// its unit test reads a limit file): absent where the tests run.
const ONLY_IN_A_CONTAINER = new Set(['visitor_api_container_memory_limit_bytes']);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}
interface Dashboard {
  panels: { title: string; targets?: { expr: string }[] }[];
}

const rules = (load(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);
const alerts = rules.filter((rule) => rule.alert !== undefined);
const dashboardExpressions = (JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard).panels
  .flatMap((panel) => panel.targets ?? [])
  .map((target) => target.expr);

const run = promisify(execFile);
const promtool = (...args: string[]) => run(PROGRAMS.promtool.path, args, { cwd: ROOT });

describeNeeding('promtool', __filename)("Prometheus's own checks (promtool)", () => {
  it('checks the rules, and the compose profile configuration that loads them', async () => {
    await expect(promtool('check', 'rules', RULES)).resolves.toBeDefined();
    const config = await promtool('check', 'config', join(PROMETHEUS, 'prometheus.yml'));
    expect(config.stdout).toContain('1 rule files found');
  });

  it("passes the rules' unit tests", async () => {
    const tested = await promtool('test', 'rules', RULE_TESTS);
    expect(tested.stdout).toContain('SUCCESS');
  });

  it('parses every expression of the dashboard (as recording rules of a file of its own)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'dashboard-rules-'));
    const file = join(folder, 'dashboard.rules.yml');
    const records = dashboardExpressions.map(
      (expr, index) =>
        `      - record: dashboard:panel_${index}\n        expr: ${JSON.stringify(expr)}`,
    );
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${records.join('\n')}\n`);
    const checked = await promtool('check', 'rules', file);
    expect(checked.stdout).toContain(`SUCCESS: ${dashboardExpressions.length} rules found`);
  });
});

describe('the rules and the dashboard, as written', () => {
  it('gives every alert a test where it fires and one where it stays silent', () => {
    const tests = (load(readFileSync(RULE_TESTS, 'utf8')) as { tests: RuleTest[] }).tests.flatMap(
      (test) => test.alert_rule_test ?? [],
    );
    for (const { alert } of alerts) {
      const its = tests.filter((test) => test.alertname === alert);
      expect([alert, its.some((test) => test.exp_alerts.length > 0)]).toEqual([alert, true]);
      expect([alert, its.some((test) => test.exp_alerts.length === 0)]).toEqual([alert, true]);
    }
  });

  it('links every alert to its section of the runbook', () => {
    const runbook = readFileSync(RUNBOOK, 'utf8');
    const anchors = new Set(
      [...runbook.matchAll(/^#{2,4} (.+)$/gm)].map((heading) =>
        heading[1]
          .trim()
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const { alert, annotations } of alerts) {
      const anchor = `${alert?.toLowerCase()}`;
      expect(annotations?.runbook).toBe(`docs/operations.md#${anchor}`);
      expect([alert, anchors.has(anchor)]).toEqual([alert, true]);
    }
  });

  it('uses in the dashboard only the recording rules that rules.yml defines', () => {
    const recorded = new Set(rules.map((rule) => rule.record).filter(Boolean));
    const used = dashboardExpressions.flatMap((expr) => expr.match(/visitor_api:[\w:]+/g) ?? []);
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((name) => !recorded.has(name))).toEqual([]);
  });
});

describe('the metric names of the rules and the dashboard', () => {
  let database: TestDatabase;
  const running: BuiltProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const { process } of running) if (process.exitCode === null) process.kill('SIGKILL');
    await database?.drop();
  });

  /** The names a process exports: every family's, with a histogram's series names. */
  async function exportedNames(port: number): Promise<Set<string>> {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const names = new Set<string>();
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      names.add(name);
      if (type === 'histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    }
    return names;
  }

  /** Starts a built program with METRICS_PORT and waits until it serves its metrics. */
  async function started(script: string, env: Record<string, string>): Promise<number> {
    const port = await findFreePort();
    const process = spawnBuilt(script, {
      databaseUrl: database.url,
      env: { ...env, METRICS_PORT: String(port), NODE_ENV: 'test' },
    });
    running.push(process);
    await until(`${script} to serve its metrics`, async () => {
      if (process.process.exitCode !== null) throw new Error(process.output.join(''));
      return fetch(`http://127.0.0.1:${port}/metrics`).then(
        (response) => response.ok,
        () => false,
      );
    });
    return port;
  }

  it('are all exported by the server or the webhook worker', async () => {
    // With Redis, as in production: the shared rate limit's metrics exist only then.
    const server = await started('main.js', {
      PORT: String(await findFreePort()),
      REDIS_URL: TEST_REDIS_URL,
    });
    const worker = await started('worker/main.js', WEBHOOK_ENV);
    const exported = new Set([...(await exportedNames(server)), ...(await exportedNames(worker))]);

    const used = new Set(
      [...rules.map((rule) => rule.expr), ...dashboardExpressions].flatMap(
        (expr) => expr.match(/\bvisitor_api_\w+/g) ?? [],
      ),
    );
    expect(used.size).toBeGreaterThan(20);
    const missing = [...used].filter(
      (name) => !exported.has(name) && !ONLY_IN_A_CONTAINER.has(name),
    );
    expect(missing).toEqual([]);
  });
});
