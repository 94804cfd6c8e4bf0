import { backoffDelay } from './backoff.js';
import { errorFromResponse, NetworkError } from './errors.js';
import { parseRateLimits, type RateLimits } from './rate-limit.js';
import type {
  ChangeFeedOptions,
  ChangePage,
  ChangeStreamOptions,
  CompanyChange,
  LeadChange,
  ChangesParams,
  CompanyChangePage,
  CompanyField,
  CompanyPage,
  FieldsParam,
  LeadChangePage,
  LeadField,
  LeadPage,
  CompanyListParams,
  CompanyVisitListParams,
  CursorPage,
  LeadListParams,
  SelectedCompany,
  SelectedLead,
  SelectedVisit,
  VisitChange,
  VisitChangePage,
  VisitField,
  VisitListParams,
  VisitPage,
  Workspace,
} from './types.js';

export interface ClientOptions {
  /** `st_...`, sent as a bearer token. */
  apiKey: string;
  /** Where the API is served, without `/v1`: `https://api.example.com`. */
  baseUrl: string;
  /** Retries of a 503 or of a request that got no response, with backoff. Default 4. */
  maxRetries?: number;
  /** Retries of a 429, each after waiting `Retry-After`. Default 5. */
  maxRateLimitRetries?: number;
  /** The first backoff wait, in ms; it doubles with every retry. Default 500. */
  backoffBaseMs?: number;
  /** The longest backoff wait, in ms. Default 30 000. */
  backoffMaxMs?: number;
  /**
   * Keep the last answers (by URL) with their `ETag` and revalidate them with `If-None-Match`: an
   * unchanged answer then comes back as a 304, without body and not counted against the rate
   * limit, and the kept copy is returned. `true` keeps the 100 URLs used last; a number, that
   * many. Default off.
   */
  revalidate?: boolean | number;
  /** Injectable for tests: the platform's `fetch` by default. */
  fetch?: typeof fetch;
  /** Injectable for tests: a `setTimeout` by default. */
  sleep?: (ms: number) => Promise<void>;
  /** Injectable for tests: the jitter of backoff waits, in [0, 1). `Math.random` by default. */
  random?: () => number;
  /** Injectable for tests: the time in ms, to know when a spent rate-limit window ends. */
  now?: () => number;
}

/** The largest page the API serves: the iterators use it to spend as few requests as possible. */
export const PAGE_SIZE = 200;

/** The largest page of a change feed: the feed iterators' default `limit`. */
export const CHANGES_PAGE_SIZE = 1000;

/** Default of `ChangeFeedOptions.maxWaits`. */
const MAX_HELD_BACK_WAITS = 10;

/** A query's parameters: only those given are sent (the API refuses an empty one with a 400). */
type Query = Record<string, string | number | Date | readonly string[] | undefined>;

/** The media type of the change streams: newline-delimited JSON. */
const NDJSON = 'application/x-ndjson';

/** The compressions the client accepts; the service prefers br when both are. */
const ACCEPT_ENCODING = 'br, gzip';

// 502 and 504 are what a load balancer answers while the service restarts: transient like a 503.
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

export class Client {
  private readonly apiKey: string;
  private readonly baseUrl: string;
  private readonly maxRetries: number;
  private readonly maxRateLimitRetries: number;
  /** Answers kept for revalidation, by URL, least recently used first (`revalidate`). */
  private readonly kept = new Map<string, { etag: string; body: unknown }>();
  private readonly maxKept: number;
  private readonly backoff: { baseMs: number; maxMs: number; random: () => number };
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  /** When the rate-limit window we know to be spent ends (on `now`); 0 when none is. */
  private spentUntil = 0;
  /**
   * The limits as the last response stated them (`RateLimit-Policy`, `RateLimit`): what is left of
   * the key's per-minute budget and of the workspace's requests in progress. Empty before any.
   */
  rateLimits: RateLimits = { policies: [], states: [] };

  constructor(options: ClientOptions) {
    this.apiKey = options.apiKey;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.maxRetries = options.maxRetries ?? 4;
    this.maxRateLimitRetries = options.maxRateLimitRetries ?? 5;
    this.maxKept =
      options.revalidate === true
        ? 100
        : typeof options.revalidate === 'number'
          ? options.revalidate
          : 0;
    this.backoff = {
      baseMs: options.backoffBaseMs ?? 500,
      maxMs: options.backoffMaxMs ?? 30_000,
      random: options.random ?? Math.random,
    };
    // Bound, not a bare reference: some platforms' fetch throws when called with another `this`.
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.now ?? Date.now;
  }

  /** The workspace the key targets: a cheap way to check a key. */
  me(): Promise<Workspace> {
    return this.get<Workspace>('/v1/me', {});
  }

  /**
   * One page of companies, `intentScore` descending; `since` keeps `lastSeen >= since`; the
   * filters (`intentLevel: ['hot']`, `crmStatus`, `minIntentScore`, `country`) and the lookups
   * (`domain: ['acme.com']`, `q: 'acme'`, a text in the name or domain) combine with AND;
   * `visitedPage: ['/pricing']` keeps those that viewed a matching page since `visitedSince`
   * (default: 30 days ago; needs `visits:read`). `fields: ['name', 'contacts.email']`: each company with only those fields and its id, the
   * returned type narrowed to them.
   */
  listCompanies<F extends CompanyField = never>(
    params: CompanyListParams<F> = {},
  ): Promise<CompanyPage<F>> {
    return this.get<CompanyPage<F>>('/v1/companies', params);
  }

  /**
   * One page of leads, `intentScore` descending; `since` keeps `createdAt >= since`; the filters
   * (`intentLevel`, `status`, `minIntentScore`, `assignedToId`) combine with AND; `fields` as
   * for `listCompanies()`.
   */
  listLeads<F extends LeadField = never>(params: LeadListParams<F> = {}): Promise<LeadPage<F>> {
    return this.get<LeadPage<F>>('/v1/leads', params);
  }

  /**
   * One company of the key's workspace; a `NotFoundError` (404) when it has none with this id.
   * `fields`: only those fields and its id.
   */
  async getCompany<F extends CompanyField = never>(
    id: string,
    params: FieldsParam<F> = {},
  ): Promise<SelectedCompany<F>> {
    return this.get<SelectedCompany<F>>(`/v1/companies/${pathSegment(id)}`, params);
  }

  /** One lead of the key's workspace; a `NotFoundError` (404) when it has none with this id. */
  async getLead<F extends LeadField = never>(
    id: string,
    params: FieldsParam<F> = {},
  ): Promise<SelectedLead<F>> {
    return this.get<SelectedLead<F>>(`/v1/leads/${pathSegment(id)}`, params);
  }

  /**
   * One page of visits, newest first (`startedAt` descending), each with its page views: `since`
   * and `until` bound `startedAt`, `page: ['/pricing', '/docs/*']` keeps the visits that viewed a
   * matching page, `companyId` the visits of those companies. The next page: `cursor:
   * page.nextCursor` with the same filters, while `page.hasMore` (a page may hold fewer than
   * `limit` when its visits are large). `fields: ['startedAt', 'pages.path']`: those fields and
   * the id, the type narrowed to them. See `visits()` for every page.
   */
  listVisits<F extends VisitField = never>(params: VisitListParams<F> = {}): Promise<VisitPage<F>> {
    return this.get<VisitPage<F>>('/v1/visits', params);
  }

  /**
   * One page of a company's visits, as `listVisits()`; a `NotFoundError` (404) when the key's
   * workspace has no company with this id. See `companyVisits()` for every page.
   */
  async listCompanyVisits<F extends VisitField = never>(
    companyId: string,
    params: CompanyVisitListParams<F> = {},
  ): Promise<VisitPage<F>> {
    return this.get<VisitPage<F>>(`/v1/companies/${pathSegment(companyId)}/visits`, params);
  }

  /**
   * One visit of the key's workspace with its page views; a `NotFoundError` (404) when it has
   * none with this id within the retention. `fields`: only those fields and its id.
   */
  async getVisit<F extends VisitField = never>(
    id: string,
    params: FieldsParam<F> = {},
  ): Promise<SelectedVisit<F>> {
    return this.get<SelectedVisit<F>>(`/v1/visits/${pathSegment(id)}`, params);
  }

  /**
   * One page of the company change feed after `cursor` (none: from the start), as the API sends
   * it. A `CursorExpiredError` (410) when the cursor is too old. See `companyChanges()`.
   */
  listCompanyChanges<F extends CompanyField = never>(
    params: ChangesParams<F> = {},
  ): Promise<CompanyChangePage<F>> {
    return this.get<CompanyChangePage<F>>('/v1/companies/changes', params);
  }

  /** One page of the lead change feed after `cursor`, as the API sends it. See `leadChanges()`. */
  listLeadChanges<F extends LeadField = never>(
    params: ChangesParams<F> = {},
  ): Promise<LeadChangePage<F>> {
    return this.get<LeadChangePage<F>>('/v1/leads/changes', params);
  }

  /** One page of the visit change feed after `cursor`, as the API sends it. See `visitChanges()`. */
  listVisitChanges<F extends VisitField = never>(
    params: ChangesParams<F> = {},
  ): Promise<VisitChangePage<F>> {
    return this.get<VisitChangePage<F>>('/v1/visits/changes', params);
  }

  /**
   * The company change feed from `cursor` (none: from the start, every live company as an
   * upsert), page after page, until caught up. Apply each page's `data` (upsert by `id`, remove on
   * `delete`), then store its `nextCursor`: the next run starts from the last one stored. The last
   * page yielded has `hasMore: false` (possibly with no data): caught up. While changes are held
   * back behind an older transaction (an empty page with `hasMore`), waits with backoff and asks
   * again, up to `maxWaits` times in a row; then yields that empty page (`hasMore: true`) and ends.
   * A `CursorExpiredError` (410): start again without a cursor and rebuild the copy. With
   * `fields`, each upserted company has only those fields and its id: keep the same through a pass.
   */
  companyChanges<F extends CompanyField = never>(
    options: ChangeFeedOptions<F> = {},
  ): AsyncGenerator<CompanyChangePage<F>, void> {
    return this.follow(
      (params) => this.listCompanyChanges({ ...params, fields: options.fields }),
      options,
    );
  }

  /** The lead change feed, page after page: as `companyChanges()`. */
  leadChanges<F extends LeadField = never>(
    options: ChangeFeedOptions<F> = {},
  ): AsyncGenerator<LeadChangePage<F>, void> {
    return this.follow(
      (params) => this.listLeadChanges({ ...params, fields: options.fields }),
      options,
    );
  }

  /**
   * The visit change feed, page after page: as `companyChanges()`, from the start every visit
   * within the retention as an upsert, pages included. A visit that leaves by the retention gets
   * no delete: drop from the copy the visits that started before the retention.
   */
  visitChanges<F extends VisitField = never>(
    options: ChangeFeedOptions<F> = {},
  ): AsyncGenerator<VisitChangePage<F>, void> {
    return this.follow(
      (params) => this.listVisitChanges({ ...params, fields: options.fields }),
      options,
    );
  }

  /**
   * The company change feed from `cursor` (none: from the start) through its NDJSON stream
   * (`GET /v1/companies/changes/stream`): a whole workspace in one request, or a few. Yields one
   * batch per checkpoint of the stream, shaped as a page (`data`, `nextCursor`, `hasMore`): apply
   * its `data`, then store its `nextCursor`, as with `companyChanges()`. The last batch has
   * `hasMore: false`: caught up.
   *
   * A stream cut before its last line (a dropped connection, a restart of the service) is read
   * again from the last checkpoint yielded, with backoff (`maxRetries` times in a row without a
   * checkpoint); the changes after that checkpoint were not yielded, so none is yielded twice. A
   * stream that ends at its time bound is followed at once by the next; one that ends at changes
   * held back behind an older transaction, after a wait (as `companyChanges()`, `maxWaits`).
   * A `CursorExpiredError` (410): start again without a cursor and rebuild the copy.
   */
  companyChangeStream<F extends CompanyField = never>(
    options: ChangeStreamOptions<F> = {},
  ): AsyncGenerator<ChangePage<CompanyChange<F>>, void> {
    return this.stream<CompanyChange<F>>('/v1/companies/changes/stream', options);
  }

  /** The lead change feed through its stream: as `companyChangeStream()`. */
  leadChangeStream<F extends LeadField = never>(
    options: ChangeStreamOptions<F> = {},
  ): AsyncGenerator<ChangePage<LeadChange<F>>, void> {
    return this.stream<LeadChange<F>>('/v1/leads/changes/stream', options);
  }

  /** The visit change feed through its stream: as `companyChangeStream()`. */
  visitChangeStream<F extends VisitField = never>(
    options: ChangeStreamOptions<F> = {},
  ): AsyncGenerator<ChangePage<VisitChange<F>>, void> {
    return this.stream<VisitChange<F>>('/v1/visits/changes/stream', options);
  }

  /**
   * Every company (seen at or after `since`, passing the filters), page after page of 200; with
   * `fields`, each with only those.
   */
  companies<F extends CompanyField = never>(
    options: Omit<CompanyListParams<F>, 'limit' | 'offset'> = {},
  ): AsyncGenerator<SelectedCompany<F>, void, undefined> {
    return this.everything((params) => this.listCompanies<F>({ ...params, ...options }));
  }

  /** Every lead (created at or after `since`, passing the filters), page after page of 200. */
  leads<F extends LeadField = never>(
    options: Omit<LeadListParams<F>, 'limit' | 'offset'> = {},
  ): AsyncGenerator<SelectedLead<F>, void, undefined> {
    return this.everything((params) => this.listLeads<F>({ ...params, ...options }));
  }

  /**
   * Every visit (passing the filters), newest first, page after page of 200 by cursor; with
   * `fields`, each with only those. Visits that arrive meanwhile sort before the first page: none
   * is repeated or skipped.
   */
  visits<F extends VisitField = never>(
    options: Omit<VisitListParams<F>, 'limit' | 'cursor'> = {},
  ): AsyncGenerator<SelectedVisit<F>, void, undefined> {
    return this.byCursor((params) => this.listVisits<F>({ ...params, ...options }));
  }

  /** Every visit of one company, newest first, by cursor: as `visits()`. */
  companyVisits<F extends VisitField = never>(
    companyId: string,
    options: Omit<CompanyVisitListParams<F>, 'limit' | 'cursor'> = {},
  ): AsyncGenerator<SelectedVisit<F>, void, undefined> {
    return this.byCursor((params) =>
      this.listCompanyVisits<F>(companyId, { ...params, ...options }),
    );
  }

  private async *everything<T>(
    list: (page: { limit: number; offset: number }) => Promise<{ total: number; data: T[] }>,
  ): AsyncGenerator<T, void, undefined> {
    for (let offset = 0; ; offset += PAGE_SIZE) {
      const page = await list({ limit: PAGE_SIZE, offset });
      yield* page.data;
      // A short page is the last; `total` saves the empty request after a last page that is full.
      if (page.data.length < PAGE_SIZE || offset + PAGE_SIZE >= page.total) return;
    }
  }

  private async *byCursor<T>(
    list: (page: { limit: number; cursor?: string }) => Promise<CursorPage<T>>,
  ): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await list({ limit: PAGE_SIZE, cursor });
      yield* page.data;
      // Not a short page: a page of large visits holds fewer than `limit`, and more may follow.
      if (!page.hasMore || page.nextCursor === null) return;
      cursor = page.nextCursor;
    }
  }

  private async *follow<P extends ChangePage<unknown>>(
    read: (params: ChangesParams) => Promise<P>,
    options: ChangeFeedOptions<string>,
  ): AsyncGenerator<P, void> {
    const limit = options.limit ?? CHANGES_PAGE_SIZE;
    const maxWaits = options.maxWaits ?? MAX_HELD_BACK_WAITS;
    let cursor = options.cursor;
    let waits = 0;
    for (;;) {
      const page = await read({ limit, cursor });
      cursor = page.nextCursor;
      const heldBack = page.hasMore && page.data.length === 0;
      // Committed changes wait for an older transaction to end: ask again later, never at once.
      if (heldBack && waits < maxWaits) {
        await this.sleep(backoffDelay(waits++, this.backoff));
        continue;
      }
      waits = 0;
      yield page;
      if (!page.hasMore || heldBack) return;
    }
  }

  private async *stream<C>(
    path: string,
    options: ChangeStreamOptions<string>,
  ): AsyncGenerator<ChangePage<C>, void> {
    const maxWaits = options.maxWaits ?? MAX_HELD_BACK_WAITS;
    let cursor = options.cursor;
    let cuts = 0;
    let waits = 0;
    for (;;) {
      const response = await this.respond(
        this.url(path, { cursor, fields: options.fields }),
        NDJSON,
      );
      let data: C[] = [];
      let last: { cursor: string; hasMore: boolean } | undefined;
      let checkpoints = 0;
      try {
        for await (const line of ndjsonLines(response)) {
          const parsed = JSON.parse(line) as { op?: string; cursor: string; hasMore?: boolean };
          if (parsed.op !== undefined) {
            data.push(parsed as C);
          } else if (parsed.hasMore === undefined) {
            // A checkpoint: every change before it is here, and the cursor to store after them.
            cursor = parsed.cursor;
            checkpoints++;
            yield { data, nextCursor: cursor, hasMore: true };
            data = [];
          } else {
            last = { cursor: parsed.cursor, hasMore: parsed.hasMore };
          }
        }
      } catch (error) {
        // A connection dropped mid-stream: resumed from the last checkpoint below.
        if (error instanceof SyntaxError) throw error;
      }
      if (last === undefined) {
        // Cut before its last line: the changes after the last checkpoint come again.
        cuts = checkpoints > 0 ? 0 : cuts;
        if (cuts >= this.maxRetries) throw new NetworkError(cuts + 1, 'the stream was cut');
        await this.sleep(backoffDelay(cuts++, this.backoff));
        continue;
      }
      cuts = 0;
      cursor = last.cursor;
      // Changes committed but held back behind an older transaction: ask again later.
      const heldBack = last.hasMore && checkpoints === 0 && data.length === 0;
      if (heldBack && waits < maxWaits) {
        await this.sleep(backoffDelay(waits++, this.backoff));
        continue;
      }
      waits = 0;
      yield { data, nextCursor: cursor, hasMore: last.hasMore };
      // Caught up, or done waiting for held-back changes; else (its time bound) the next at once.
      if (!last.hasMore || heldBack) return;
    }
  }

  private async get<T>(path: string, params: object): Promise<T> {
    const url = this.url(path, params);
    const kept = this.kept.get(url);
    const response = await this.respond(url, 'application/json', kept?.etag);
    if (response.status === 304 && kept) {
      this.keep(url, kept.etag, kept.body);
      return kept.body as T;
    }
    const body = (await response.json()) as T;
    const etag = response.headers.get('etag');
    if (etag !== null) this.keep(url, etag, body);
    return body;
  }

  /**
   * A 2xx (or a 304 to `etag`) for `url`, after the retries: of a 429, of a 502/503/504 and of a
   * request that got no response; any other answer is thrown as its typed error.
   */
  private async respond(url: string, accept: string, etag?: string): Promise<Response> {
    let failures = 0;
    let rateLimited = 0;
    for (let attempt = 1; ; attempt++) {
      await this.waitForWindow();
      let response: Response;
      try {
        response = await this.fetch(url, {
          headers: {
            Authorization: `Bearer ${this.apiKey}`,
            Accept: accept,
            // A page of 200 companies is ~200 KB of JSON, ~36 KB in br: asked for explicitly
            // rather than left to the platform's default. Node's fetch (and browsers') decode
            // both; a custom `fetch` must too.
            'Accept-Encoding': ACCEPT_ENCODING,
            ...(etag !== undefined && { 'If-None-Match': etag }),
          },
        });
      } catch (error) {
        if (failures >= this.maxRetries) throw new NetworkError(attempt, error);
        await this.sleep(backoffDelay(failures++, this.backoff));
        continue;
      }
      this.noteRateLimit(response);
      if (response.ok || (response.status === 304 && etag !== undefined)) return response;

      if (response.status === 429 && rateLimited < this.maxRateLimitRetries) {
        // The wait is the spent window's (noteRateLimit): being told to wait is not a failure.
        rateLimited++;
        await response.body?.cancel();
        if (this.spentUntil <= this.now())
          await this.sleep(backoffDelay(rateLimited, this.backoff));
        continue;
      }
      if (TRANSIENT_STATUSES.has(response.status) && failures < this.maxRetries) {
        await response.body?.cancel();
        // A 503's Retry-After (1 s when the service sheds load, 5 s when its database failed) is
        // the least to wait; the backoff, longer with every retry, may say more.
        const retryAfterMs = (headerNumber(response, 'retry-after') ?? 0) * 1000;
        const backoff = backoffDelay(failures++, this.backoff);
        await this.sleep(Math.max(backoff, Math.min(retryAfterMs, this.backoff.maxMs)));
        continue;
      }
      // 400 and 401 would fail the same way again; a 500 is a fault of the service for this very
      // request, so a retry would most likely hit it again and only delay the report.
      throw await errorFromResponse(response, attempt);
    }
  }

  /** Keeps an answer for revalidation, as the most recently used; forgets the least recent. */
  private keep(url: string, etag: string, body: unknown): void {
    if (this.maxKept === 0) return;
    this.kept.delete(url);
    this.kept.set(url, { etag, body });
    if (this.kept.size > this.maxKept) this.kept.delete(this.kept.keys().next().value as string);
  }

  /**
   * Remembers when the window ends once it is spent (the per-minute budget at 0, or a 429), so
   * that the next request waits for the new window instead of spending itself on a known 429.
   * The IETF fields first, the `X-RateLimit-*` headers where they are absent.
   */
  private noteRateLimit(response: Response): void {
    const limits = parseRateLimits(response.headers);
    if (limits.states.length > 0 || limits.policies.length > 0) this.rateLimits = limits;
    const perMinute = limits.states.find((state) => state.name === 'per-minute');
    const remaining = perMinute?.remaining ?? headerNumber(response, 'x-ratelimit-remaining');
    const reset =
      headerNumber(response, 'retry-after') ??
      perMinute?.resetSeconds ??
      headerNumber(response, 'x-ratelimit-reset');
    if ((remaining === 0 || response.status === 429) && reset !== null) {
      this.spentUntil = Math.max(this.spentUntil, this.now() + reset * 1000);
    }
  }

  private async waitForWindow(): Promise<void> {
    const wait = this.spentUntil - this.now();
    if (wait > 0) await this.sleep(wait);
    this.spentUntil = 0;
  }

  private url(path: string, params: object): string {
    const url = new URL(`${this.baseUrl}${path}`);
    // Only the parameters given: the API refuses an unknown or empty one with a 400.
    for (const [name, value] of Object.entries(params as Query)) {
      if (value === undefined) continue;
      // Several values of a filter: comma-separated, as the API documents them.
      const text =
        value instanceof Date
          ? value.toISOString()
          : Array.isArray(value)
            ? value.join(',')
            : String(value);
      url.searchParams.set(name, text);
    }
    return url.toString();
  }
}

/** The lines of an NDJSON body, as they come (decoded whole: a character may span two chunks). */
async function* ndjsonLines(response: Response): AsyncGenerator<string, void> {
  if (response.body === null) return;
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    let at: number;
    while ((at = pending.indexOf('\n')) !== -1) {
      yield pending.slice(0, at);
      pending = pending.slice(at + 1);
    }
  }
  pending += decoder.decode();
  if (pending.trim() !== '') yield pending;
}

/**
 * An id as one path segment, every reserved character escaped (`/`, `?`, `#`...). An empty id,
 * `.` or `..` cannot be one: the URL would name the list or its parent instead.
 */
function pathSegment(id: string): string {
  if (id === '' || id === '.' || id === '..') throw new RangeError(`Not an id: "${id}"`);
  return encodeURIComponent(id);
}

function headerNumber(response: Response, name: string): number | null {
  const value = response.headers.get(name);
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  return Number(value);
}
