import type { CompanyDto } from '../companies/dto/company.dto';
import type { DeviceType } from '../generated/prisma/enums';
import { Random } from './demo-data';

/*
 * The demo's visits (`seed --demo`): a few thousand page views over the last 60 days on the demo
 * customer's site, by most of the demo companies, the hot ones more often and more recently. A
 * site's pages (home, pricing, a demo form, product pages, a blog, customer stories, docs), the
 * campaigns that bring visitors (search ads, LinkedIn, a newsletter) and organic referrers. Seeded
 * like the companies: the same visits on every run, dates following the clock.
 */
export const DEMO_VISIT_WINDOW_DAYS = 60;
export const DEMO_HOSTNAME = 'www.visitor-demo.example';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

interface Page {
  path: string;
  title: string;
}

const HOME: Page = { path: '/', title: 'Visitor Demo: know who is on your website' };
const PRICING: Page = { path: '/pricing', title: 'Pricing' };
const DEMO: Page = { path: '/demo', title: 'Book a demo' };
const PRODUCT: Page[] = [
  { path: '/product/identification', title: 'Company identification' },
  { path: '/product/intent', title: 'Intent scoring' },
  { path: '/product/integrations', title: 'CRM integrations' },
];
const BLOG: Page[] = [
  { path: '/blog/reading-intent-signals', title: 'Reading intent signals' },
  { path: '/blog/abm-without-cookies', title: 'Account-based marketing without cookies' },
  { path: '/blog/gdpr-and-b2b-tracking', title: 'GDPR and B2B website tracking' },
  { path: '/blog/from-visit-to-meeting', title: 'From a visit to a meeting in 48 hours' },
  { path: '/blog/scoring-models', title: 'Three scoring models compared' },
];
const CUSTOMERS: Page[] = [
  { path: '/customers/logistics', title: 'Customers in logistics' },
  { path: '/customers/software', title: 'Customers in software' },
  { path: '/customers/manufacturing', title: 'Customers in manufacturing' },
];
const DOCS: Page[] = [
  { path: '/docs/api', title: 'API reference' },
  { path: '/docs/webhooks', title: 'Webhooks' },
];
const CAREERS: Page = { path: '/careers', title: 'Careers' };

/** Where a visit comes from: its referrer and UTM parameters, and the page it lands on. */
interface Channel {
  weight: number;
  referrer: string | null;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  landing: (random: Random) => Page;
}

const CHANNELS: Channel[] = [
  {
    weight: 30,
    referrer: 'https://www.google.com/',
    ...utm(null, null, null),
    landing: (r) => r.pick([HOME, ...BLOG, ...BLOG]),
  },
  {
    weight: 18,
    referrer: null,
    ...utm(null, null, null),
    landing: () => HOME,
  },
  {
    weight: 8,
    referrer: 'https://www.google.com/',
    ...utm('google', 'cpc', 'brand-search'),
    term: 'visitor identification',
    landing: (r) => r.pick([PRICING, HOME, HOME]),
  },
  {
    weight: 12,
    referrer: 'https://www.linkedin.com/',
    ...utm('linkedin', 'paid-social', 'q4-abm'),
    content: 'carousel-intent',
    landing: (r) => r.pick(PRODUCT),
  },
  {
    weight: 10,
    referrer: null,
    ...utm('newsletter', 'email', 'monthly-digest'),
    content: 'header-link',
    landing: (r) => r.pick(BLOG),
  },
  {
    weight: 6,
    referrer: 'https://www.g2.com/',
    ...utm('g2', 'referral', null),
    landing: () => HOME,
  },
];

function utm(source: string | null, medium: string | null, campaign: string | null) {
  return { source, medium, campaign, term: null, content: null };
}

const COUNTRY_CODES: Record<string, string> = {
  France: 'FR',
  Germany: 'DE',
  'United Kingdom': 'GB',
  Spain: 'ES',
  Belgium: 'BE',
  Netherlands: 'NL',
  Switzerland: 'CH',
  'United States': 'US',
};

const DEVICES: { value: DeviceType; weight: number }[] = [
  { value: 'desktop', weight: 74 },
  { value: 'mobile', weight: 20 },
  { value: 'tablet', weight: 5 },
  { value: 'other', weight: 1 },
];

/** A demo visit in the import's format (NDJSON lines of `admin import-visits`). */
export interface DemoVisit {
  id: string;
  companyId: string;
  startedAt: string;
  endedAt: string;
  referrer: string | null;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
  deviceType: DeviceType;
  country: string | null;
  pages: {
    hostname: string;
    path: string;
    title: string | null;
    viewedAt: string;
    secondsOnPage: number | null;
  }[];
}

/**
 * The visits of the demo companies within the 60 days before `now` and within each company's
 * firstSeen and lastSeen, newest last: hotter companies visit more, deeper, and reach the pricing
 * and demo pages more often.
 */
export function buildDemoVisits(companies: CompanyDto[], now: number): DemoVisit[] {
  const random = new Random(0x0015_17ed);
  const end = Math.floor(now / HOUR_MS) * HOUR_MS;
  const visits: DemoVisit[] = [];
  for (const company of companies) {
    const heat = company.intentScore / 100;
    const count = Math.round(heat * 12 + random.int(0, 3));
    const from = Math.max(Date.parse(company.firstSeen), end - DEMO_VISIT_WINDOW_DAYS * DAY_MS);
    const to = Date.parse(company.lastSeen);
    if (count === 0 || to <= from) continue;
    for (let n = 0; n < count; n++) {
      // The last visit is the company's lastSeen; the others before it, closer for hot accounts.
      const start = n === 0 ? to : to - Math.floor((to - from) * random.next() ** (1 + heat));
      visits.push(demoVisit(random, company, start, heat));
    }
  }
  visits.sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
  return visits.map((visit, index) => ({
    ...visit,
    id: `vi_demo_${String(index + 1).padStart(5, '0')}`,
  }));
}

function demoVisit(random: Random, company: CompanyDto, start: number, heat: number): DemoVisit {
  const channel = random.weighted(CHANNELS.map((c) => ({ value: c, weight: c.weight })));
  const route = [channel.landing(random)];
  const depth = random.int(0, 2 + Math.round(heat * 5));
  for (let i = 0; i < depth; i++) route.push(nextPage(random, route[route.length - 1], heat));
  let viewedAt = Math.floor(start / 1000) * 1000;
  const pages = route.map((page, index) => {
    const seconds = index === route.length - 1 ? null : random.int(8, 240);
    const view = {
      hostname: DEMO_HOSTNAME,
      path: page.path,
      title: page.title,
      viewedAt: new Date(viewedAt).toISOString(),
      secondsOnPage: seconds,
    };
    viewedAt += (seconds ?? 0) * 1000;
    return view;
  });
  const { referrer, source, medium, campaign, term, content } = channel;
  return {
    id: '',
    companyId: company.id,
    startedAt: pages[0].viewedAt,
    endedAt: new Date(viewedAt + random.int(0, 30) * 1000).toISOString(),
    referrer,
    source,
    medium,
    campaign,
    term,
    content,
    deviceType: random.weighted(DEVICES),
    country: random.chance(0.95) ? (COUNTRY_CODES[company.country] ?? null) : null,
    pages,
  };
}

/** The page a visitor opens after `from`: pricing and the demo form more often when hot. */
function nextPage(random: Random, from: Page, heat: number): Page {
  if (from === PRICING && random.chance(0.1 + heat / 2)) return DEMO;
  if (random.chance(heat ** 2 / 4)) return PRICING;
  return random.weighted([
    { value: random.pick(PRODUCT), weight: 30 },
    { value: random.pick(BLOG), weight: 25 },
    { value: random.pick(CUSTOMERS), weight: 18 },
    { value: random.pick(DOCS), weight: 12 },
    { value: HOME, weight: 10 },
    { value: CAREERS, weight: 5 },
  ]);
}
