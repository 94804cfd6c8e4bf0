import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { createTestApp, type TestApp } from '../../support/app';
import { describeNeeding, PROGRAMS } from '../../support/programs';

/** Committed beside docs/openapi.json, so that a reader sees the page without running it. */
const SCREENSHOT = join(__dirname, '../../..', 'docs', 'api-docs.png');
// Debian's chromium (apt-get install chromium; .ci/run installs it): no browser download.
const CHROMIUM = PROGRAMS.chromium.path;
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
// Starting a browser on a busy CI machine can take a while: a bound, not an expectation.
const BROWSER_TIMEOUT_MS = 120_000;

// The Swagger UI page at /docs, loaded by a real browser from a listening application.
describeNeeding('chromium', __filename)('GET /docs in a browser', () => {
  let t: TestApp;
  let browser: Browser | undefined;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  }, BROWSER_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  it(
    'lists every operation, with every asset from the service itself and no error',
    async () => {
      const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
      const requested: string[] = [];
      const problems: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`);
      });

      const response = await page.goto(`${base}/docs`);
      expect(response?.status()).toBe(200);
      const paths = [
        '/v1/me',
        '/v1/companies',
        '/v1/companies/changes',
        '/v1/companies/changes/stream',
        '/v1/companies/{id}',
        '/v1/leads',
        '/v1/leads/changes',
        '/v1/leads/changes/stream',
        '/v1/leads/{id}',
        '/v1/visits',
        '/v1/visits/changes',
        '/v1/visits/changes/stream',
        '/v1/visits/{id}',
        '/v1/companies/{id}/visits',
      ];
      for (const path of paths) {
        await page
          .locator(`.opblock-get .opblock-summary-path[data-path="${path}"]`)
          .waitFor({ state: 'visible', timeout: BROWSER_TIMEOUT_MS });
      }
      await expect(page.locator('.opblock').count()).resolves.toBe(paths.length);
      await expect(page.locator('.info .title').textContent()).resolves.toContain(
        'Visitor read API',
      );
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      expect(problems).toEqual([]);
      // No CDN: the machine may have no internet, and the page must not need it.
      expect(
        requested.filter((url) => !url.startsWith(`${base}/`) && !url.startsWith('data:')),
      ).toEqual([]);
      await page.close();
    },
    BROWSER_TIMEOUT_MS,
  );
});
