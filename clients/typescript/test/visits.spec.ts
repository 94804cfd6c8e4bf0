import { Client, NotFoundError } from '../src';

/*
 * The client's visits reads against scripted responses: the URLs they send (the API refuses an
 * unknown or empty parameter), the iterators' paging by cursor, the feed and its stream.
 */

function reply(status: number, body: unknown, contentType = 'application/json'): Response {
  const text =
    typeof body === 'string' ? body : JSON.stringify(body ?? { statusCode: status, message: '' });
  return new Response(text, { status, headers: { 'Content-Type': contentType } });
}

/** A client whose fetch plays `script` in order, and the URLs it was asked for. */
function scripted(script: Response[]) {
  const urls: string[] = [];
  const client = new Client({
    apiKey: 'st_test',
    baseUrl: 'http://api.test',
    fetch: (input) => {
      urls.push(input as string); // the client always passes a string
      const next = script.shift();
      if (!next) throw new Error('the script is over');
      return Promise.resolve(next);
    },
    sleep: () => Promise.resolve(),
  });
  return { client, urls };
}

const visitPage = (ids: string[], nextCursor: string | null) =>
  reply(200, { data: ids.map((id) => ({ id })), nextCursor, hasMore: nextCursor !== null });

describe('Client visits lists', () => {
  it('send the filters as the API takes them: arrays comma-separated, dates in ISO 8601', async () => {
    const { client, urls } = scripted([visitPage([], null), visitPage([], null)]);
    await client.listVisits({
      limit: 10,
      since: new Date('2026-11-23T00:00:00Z'),
      until: '2026-11-30',
      page: ['/pricing', '/docs/*'],
      companyId: ['co_1', 'co_2'],
      fields: ['startedAt', 'pages.path'],
    });
    await client.listCompanies({ visitedPage: ['/pricing'], visitedSince: new Date(0) });
    expect(urls).toEqual([
      'http://api.test/v1/visits?limit=10&since=2026-11-23T00%3A00%3A00.000Z&until=2026-11-30' +
        '&page=%2Fpricing%2C%2Fdocs%2F*&companyId=co_1%2Cco_2&fields=startedAt%2Cpages.path',
      'http://api.test/v1/companies?visitedPage=%2Fpricing&visitedSince=1970-01-01T00%3A00%3A00.000Z',
    ]);
  });

  it('visits() follows nextCursor with the same filters, past short pages, to the last', async () => {
    // A page of large visits holds fewer than the limit and has more: not the end.
    const { client, urls } = scripted([
      visitPage(['vi_3', 'vi_2'], 'c1'),
      visitPage(['vi_1'], 'c2'),
      visitPage([], null),
    ]);
    const ids: string[] = [];
    for await (const visit of client.visits({ page: ['/pricing'] })) ids.push(visit.id);
    expect(ids).toEqual(['vi_3', 'vi_2', 'vi_1']);
    expect(urls).toEqual([
      'http://api.test/v1/visits?limit=200&page=%2Fpricing',
      'http://api.test/v1/visits?limit=200&cursor=c1&page=%2Fpricing',
      'http://api.test/v1/visits?limit=200&cursor=c2&page=%2Fpricing',
    ]);
  });

  it("companyVisits() pages a company's visits, its id one escaped path segment", async () => {
    const { client, urls } = scripted([visitPage(['vi_2'], 'c1'), visitPage(['vi_1'], null)]);
    const ids: string[] = [];
    for await (const visit of client.companyVisits('co_a/b', { since: '2026-11-01' })) {
      ids.push(visit.id);
    }
    expect(ids).toEqual(['vi_2', 'vi_1']);
    expect(urls).toEqual([
      'http://api.test/v1/companies/co_a%2Fb/visits?limit=200&since=2026-11-01',
      'http://api.test/v1/companies/co_a%2Fb/visits?limit=200&cursor=c1&since=2026-11-01',
    ]);
  });

  it('getVisit reads one visit by its escaped id; a 404 is a NotFoundError', async () => {
    const { client, urls } = scripted([reply(200, { id: 'vi_1' }), reply(404, null)]);
    expect(await client.getVisit('vi_1', { fields: ['pages'] })).toEqual({ id: 'vi_1' });
    await expect(client.getVisit('vi_?')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.listCompanyVisits('..')).rejects.toBeInstanceOf(RangeError);
    expect(urls).toEqual([
      'http://api.test/v1/visits/vi_1?fields=pages',
      'http://api.test/v1/visits/vi_%3F',
    ]);
  });
});

describe('Client visit change feed', () => {
  const upsert = (id: string) => ({
    op: 'upsert',
    id,
    changedAt: '2026-12-01T09:00:00.000Z',
    visit: { id },
  });
  const deletion = (id: string) => ({ op: 'delete', id, changedAt: '2026-12-01T09:00:00.000Z' });

  it('visitChanges() follows the feed from a stored cursor until caught up', async () => {
    const { client, urls } = scripted([
      reply(200, { data: [upsert('vi_1')], nextCursor: 'c2', hasMore: true }),
      reply(200, { data: [deletion('vi_0')], nextCursor: 'c3', hasMore: false }),
    ]);
    const pages = [];
    for await (const page of client.visitChanges({ cursor: 'c1', fields: ['startedAt'] })) {
      pages.push(page);
    }
    expect(pages.map((page) => [page.data, page.nextCursor])).toEqual([
      [[upsert('vi_1')], 'c2'],
      [[deletion('vi_0')], 'c3'],
    ]);
    expect(urls).toEqual([
      'http://api.test/v1/visits/changes?limit=1000&cursor=c1&fields=startedAt',
      'http://api.test/v1/visits/changes?limit=1000&cursor=c2&fields=startedAt',
    ]);
  });

  it('visitChangeStream() yields a batch per checkpoint of the stream, then the last', async () => {
    const lines = [
      upsert('vi_1'),
      { cursor: 'k1' },
      deletion('vi_0'),
      { cursor: 'k2', hasMore: false },
    ];
    const { client, urls } = scripted([
      reply(200, lines.map((line) => `${JSON.stringify(line)}\n`).join(''), 'application/x-ndjson'),
    ]);
    const batches = [];
    for await (const batch of client.visitChangeStream({ cursor: 'c1' })) batches.push(batch);
    expect(batches).toEqual([
      { data: [upsert('vi_1')], nextCursor: 'k1', hasMore: true },
      { data: [deletion('vi_0')], nextCursor: 'k2', hasMore: false },
    ]);
    expect(urls).toEqual(['http://api.test/v1/visits/changes/stream?cursor=c1']);
  });
});
