import { DeviceType } from '../generated/prisma/enums';
import { selectable } from '../items/field-selection';
import {
  count,
  dateTime,
  derived,
  ID_MAX_LENGTH,
  nullableCount,
  nullableText,
  oneOf,
  text,
} from '../items/fields';

/*
 * Maximum lengths, in characters, as for the other items (company.fields.ts): what the import
 * accepts, what the database stores (CHECK constraints, migration 20261202000000_visits) and what
 * a response can weigh (docs/api.md, "Sizes").
 *
 * - URLs and paths: 2,048, the longest URL that every browser and search engine handles.
 * - UTM values: 200. Campaign names are short labels; analytics tools cap them at 100 to 255.
 * - A page's title: 1,000 (browsers show about 60; some sites stuff keywords into them).
 * - A hostname: 253, the longest DNS name (RFC 1035).
 */
export const URL_MAX_LENGTH = 2048;
const UTM_MAX_LENGTH = 200;

/** Page views per visit, at most: the import refuses more, and so does the database (CHECK). */
export const MAX_PAGES_PER_VISIT = 500;

/** The longest a visit may last (the import refuses more, and so does the database). */
export const MAX_VISIT_HOURS = 24;

const UTM = (parameter: string) =>
  nullableText(parameter, UTM_MAX_LENGTH, {
    description: `The visit's \`utm_${parameter}\` campaign parameter, or null.`,
    example: parameter === 'source' ? 'newsletter' : null,
  });

/**
 * A visit's fields, in the contract's order: the one place that names their columns and kinds
 * (items/fields.ts). `pages` is the visit's list of PAGE_VIEW_FIELDS objects, assembled by the SQL
 * in visits.sql.ts.
 */
export const VISIT_FIELDS = {
  id: text('id', ID_MAX_LENGTH, { example: 'vi_000001' }),
  companyId: text('company_id', ID_MAX_LENGTH, {
    description: 'The company that visited, a company of the same workspace.',
    example: 'co_000001',
  }),
  startedAt: dateTime('started_at', {
    description: 'When the visit started. The lists are sorted by it, newest first.',
    example: '2026-11-30T14:02:11.000Z',
  }),
  endedAt: dateTime('ended_at', {
    description: `When the visit ended: at or after \`startedAt\`, at most ${MAX_VISIT_HOURS} hours later.`,
    example: '2026-11-30T14:09:45.000Z',
  }),
  durationSeconds: derived(
    count('duration_seconds', {
      description: 'Whole seconds from `startedAt` to `endedAt`, rounded down.',
      example: 454,
    }),
  ),
  pageViewCount: derived(
    count('page_view_count', {
      description: `The number of \`pages\`, 1 to ${MAX_PAGES_PER_VISIT}.`,
      example: 3,
    }),
  ),
  landingPage: derived(
    text('landing_page', URL_MAX_LENGTH, {
      description: 'The `path` of the first page.',
      example: '/',
    }),
  ),
  referrer: nullableText('referrer', URL_MAX_LENGTH, {
    description: 'The URL the visitor came from, or null.',
    example: 'https://www.google.com/',
  }),
  source: UTM('source'),
  medium: UTM('medium'),
  campaign: UTM('campaign'),
  term: UTM('term'),
  content: UTM('content'),
  deviceType: oneOf('device_type', DeviceType, 'DeviceType', {
    description: 'The kind of device the visit came from.',
  }),
  country: nullableText(
    'country',
    2,
    {
      description: 'Where the visit came from: an ISO 3166-1 alpha-2 code, upper case, or null.',
      example: 'FR',
    },
    { pattern: /^[A-Z]{2}$/, rule: 'be two upper-case letters (ISO 3166-1 alpha-2)' },
  ),
};

export const PAGE_VIEW_FIELDS = {
  hostname: text('hostname', 253, {
    description: 'The host of the page.',
    example: 'www.example.com',
  }),
  path: text(
    'path',
    URL_MAX_LENGTH,
    {
      description:
        'The path of the page, as the tracker sent it (percent-encoding kept), without its query ' +
        'string or fragment.',
      example: '/pricing',
    },
    { pattern: /^\/[^?#]*$/, rule: 'start with / and hold no ? or #' },
  ),
  title: nullableText('title', 1000, {
    description: "The page's title, or null.",
    example: 'Pricing',
  }),
  viewedAt: dateTime('viewed_at', {
    description: "When the page was viewed: within its visit's `startedAt` and `endedAt`.",
    example: '2026-11-30T14:03:02.000Z',
  }),
  secondsOnPage: nullableCount('seconds_on_page', {
    description: 'Seconds spent on the page, or null when unknown (the last page of a visit).',
    example: 42,
  }),
};

/**
 * What a read's `fields` may name (items/field-selection.ts): a visit's fields, and its pages,
 * whole (`pages`) or by field (`pages.path`). A page view has no id: each comes with just the
 * fields named.
 */
export const VISIT_SELECTABLE = selectable(VISIT_FIELDS, { pages: PAGE_VIEW_FIELDS });
