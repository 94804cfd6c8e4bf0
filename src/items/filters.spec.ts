import { COMPANY_FILTERS } from '../companies/company.fields';
import { givenFilters, namedFilters, parseFilter } from './filters';

const DAY_MS = 86_400_000;
const patterns = parseFilter('visitedPage', COMPANY_FILTERS.visitedPage, '/pricing');
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);

// visitedPage's statement names no page view unless its window starts within a day (and an hour,
// for the two clocks) of the retention's start: visited_paths answers for the rest.
describe('the variant of visitedPage', () => {
  it.each([
    ['the default window', undefined, 395, 'visitedPage'],
    ['a window from 393 days ago', daysAgo(393), 395, 'visitedPage'],
    ['a window from 394 days ago', daysAgo(394), 395, 'visitedPage@early'],
    ['a window from before the retention', daysAgo(500), 395, 'visitedPage@early'],
    ['the default window with a retention of 7 days', undefined, 7, 'visitedPage@early'],
  ])('%s', (_, visitedSince, visitRetentionDays, name) => {
    const query = { visitedPage: patterns, visitedSince };
    const { names } = givenFilters(COMPANY_FILTERS, query, { visitRetentionDays });
    expect(names).toEqual([name]);
    const [filter] = namedFilters(COMPANY_FILTERS, names);
    expect(filter.kind === 'visitedPage' && filter.early === true).toBe(name.endsWith('@early'));
  });
});
