import { buildDemoData } from './demo-data';
import { buildDemoVisits, DEMO_VISIT_WINDOW_DAYS } from './demo-visits';
import { checkVisitLine } from './visit-lines';

const NOW = Date.parse('2026-03-01T09:41:27.512Z');
const DAY_MS = 86_400_000;

describe('buildDemoVisits', () => {
  const { companies } = buildDemoData(NOW);
  const visits = buildDemoVisits(companies, NOW);
  const window = {
    earliest: new Date(NOW - 395 * DAY_MS),
    latest: new Date(NOW),
    retentionDays: 395,
  };

  it('is a valid import: every line passes the import checks', () => {
    for (const visit of visits) {
      expect(checkVisitLine(JSON.stringify(visit), window).problems).toBeUndefined();
    }
  });

  it('has thousands of page views over the last 60 days, by most companies, ids unique', () => {
    const pages = visits.reduce((sum, visit) => sum + visit.pages.length, 0);
    expect(visits.length).toBeGreaterThan(1000);
    expect(pages).toBeGreaterThan(4000);
    expect(new Set(visits.map((visit) => visit.companyId)).size).toBeGreaterThan(
      companies.length / 2,
    );
    expect(new Set(visits.map((visit) => visit.id)).size).toBe(visits.length);
    for (const visit of visits) {
      expect(Date.parse(visit.startedAt)).toBeGreaterThanOrEqual(
        NOW - DEMO_VISIT_WINDOW_DAYS * DAY_MS - 3_600_000,
      );
    }
  });

  it('brings the hot accounts to the pricing page more than the cold ones, through campaigns', () => {
    const scores = new Map(companies.map((company) => [company.id, company.intentScore]));
    const sawPricing = (level: (score: number) => boolean) => {
      const of = visits.filter((visit) => level(scores.get(visit.companyId) as number));
      const priced = of.filter((visit) => visit.pages.some((page) => page.path === '/pricing'));
      return priced.length / of.length;
    };
    expect(sawPricing((score) => score >= 70)).toBeGreaterThan(2 * sawPricing((s) => s < 40));
    expect(new Set(visits.map((visit) => visit.campaign))).toEqual(
      new Set([null, 'brand-search', 'q4-abm', 'monthly-digest']),
    );
  });

  it('is the same on every run, so that re-seeding leaves the visits unchanged', () => {
    expect(buildDemoVisits(buildDemoData(NOW).companies, NOW)).toEqual(visits);
  });
});
