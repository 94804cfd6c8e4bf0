import type {
  HeaderObject,
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import request from 'supertest';
import * as rateLimitHeaders from '../../../src/http/rate-limit-headers';
import { AllExceptionsFilter } from '../../../src/http/all-exceptions.filter';
import { RateLimitGuard } from '../../../src/rate-limit/rate-limit.guard';
import { CompaniesService } from '../../../src/companies/companies.service';
import {
  buildOpenApiDocument,
  OPENAPI_FILE,
  serializeOpenApiDocument,
} from '../../../src/openapi/openapi';
import {
  COMPANY_FIELDS,
  COMPANY_SELECTABLE,
  CONTACT_FIELDS,
} from '../../../src/companies/company.fields';
import { selectableNames } from '../../../src/items/field-selection';
import { LEAD_FIELDS, LEAD_SELECTABLE } from '../../../src/leads/lead.fields';
import { createTestApp, type TestApp } from '../../support/app';
import { takeContractViolations } from '../../support/contract-violations';
import { createTenant, expectErrorEnvelope, getWithKey } from '../../support/http';
import { jsonText } from '../../../src/http/json-text';

type Schema = SchemaObject | ReferenceObject;

/** A schema in one line, every constraint included: `number 0..100`, `string | null`, `Plan`. */
function summary(schema: Schema): string {
  if ('$ref' in schema) return schema.$ref.replace('#/components/schemas/', '');
  if (schema.allOf) return schema.allOf.map(summary).join(' & ');
  if (schema.oneOf) return schema.oneOf.map(summary).join(' | ');
  if (schema.anyOf) return schema.anyOf.map(summary).join(' | ');
  let text =
    schema.type === 'array' && schema.items ? `${summary(schema.items)}[]` : String(schema.type);
  if (schema.format) text += ` ${schema.format}`;
  if (schema.minimum !== undefined || schema.maximum !== undefined) {
    text += ` ${schema.minimum ?? ''}..${schema.maximum ?? ''}`;
  }
  if (schema.enum) text += ` (${schema.enum.join('|')})`;
  if (schema.pattern) text += ` /${schema.pattern}/`;
  if (schema.default !== undefined) text += ` = ${String(schema.default)}`;
  if (schema.nullable) text += ' | null';
  return text;
}

/** Every property of a component schema, summarised; and every one of them must be required. */
function fields(document: OpenAPIObject, name: string): Record<string, string> {
  const schema = document.components?.schemas?.[name] as SchemaObject;
  const properties = schema.properties ?? {};
  expect([...(schema.required ?? [])].sort()).toEqual(Object.keys(properties).sort());
  return Object.fromEntries(
    Object.entries(properties).map(([key, value]) => [key, summary(value)]),
  );
}

// Path, operation id, tag, the 200's schema, and the statuses only that operation answers.
const OPERATIONS = [
  ['/v1/me', 'getMe', 'workspace', 'WorkspaceDto', []],
  ['/v1/companies', 'listCompanies', 'companies', 'CompanyPageDto', ['403']],
  ['/v1/companies/changes', 'companyChanges', 'companies', 'CompanyChangePageDto', ['403', '410']],
  [
    '/v1/companies/{id}',
    'getCompany',
    'companies',
    'CompanyDto | SelectedCompanyDto',
    ['403', '404'],
  ],
  ['/v1/leads', 'listLeads', 'leads', 'LeadPageDto', ['403']],
  ['/v1/leads/changes', 'leadChanges', 'leads', 'LeadChangePageDto', ['403', '410']],
  ['/v1/leads/{id}', 'getLead', 'leads', 'LeadDto | SelectedLeadDto', ['403', '404']],
  ['/v1/visits', 'listVisits', 'visits', 'VisitPageDto', ['403']],
  ['/v1/visits/changes', 'visitChanges', 'visits', 'VisitChangePageDto', ['403', '410']],
  ['/v1/visits/{id}', 'getVisit', 'visits', 'VisitDto | SelectedVisitDto', ['403', '404']],
  ['/v1/companies/{id}/visits', 'listCompanyVisits', 'visits', 'VisitPageDto', ['403', '404']],
] as const;

// The feeds' streams: NDJSON lines instead of a JSON body, and no validator (no ETag, no 304).
const STREAMS = [
  ['/v1/companies/changes/stream', 'companyChangeStream', 'companies', 'CompanyUpsertedDto'],
  ['/v1/leads/changes/stream', 'leadChangeStream', 'leads', 'LeadUpsertedDto'],
  ['/v1/visits/changes/stream', 'visitChangeStream', 'visits', 'VisitUpsertedDto'],
] as const;

const EVERY_RESPONSE = {
  'X-Request-Id': 'string /^[A-Za-z0-9._:-]{1,128}$/',
  'Cache-Control': 'string (no-store)',
  Vary: 'string (Accept-Encoding)',
};
const RATE_LIMIT = {
  'X-RateLimit-Limit': 'integer int32 1..2147483647',
  'X-RateLimit-Remaining': 'integer int32 0..2147483647',
  'X-RateLimit-Reset': 'integer int32 1..60',
};

const KEY_EXPIRATION = { 'API-Key-Expiration': 'string date-time' };

// The IETF draft's fields: one Structured Field List member per limit.
const POLICY = '"(?:per-minute|auth-failures|in-flight)"';
const IETF_RATE_LIMIT = {
  'RateLimit-Policy': `string /^${POLICY};q=\\d+;(?:w=\\d+|qu="concurrent-requests")(?:, ${POLICY};q=\\d+;(?:w=\\d+|qu="concurrent-requests"))*$/`,
  RateLimit: `string /^${POLICY};r=\\d+(?:;t=\\d+)?(?:, ${POLICY};r=\\d+(?:;t=\\d+)?)*$/`,
};

/** The headers of a response: name, required or not, and the schema summarised. */
function headersOf(response: ResponseObject): Record<string, string> {
  return Object.fromEntries(
    Object.entries(response.headers ?? {}).map(([name, header]) => {
      const { required, schema } = header as HeaderObject;
      return [name, `${required ? 'required' : 'optional'} ${summary(schema as Schema)}`];
    }),
  );
}

const required = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `required ${value}`]));
const optional = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `optional ${value}`]));

describe('the OpenAPI document', () => {
  let t: TestApp;
  let document: OpenAPIObject;

  beforeAll(async () => {
    t = await createTestApp();
    document = buildOpenApiDocument(t.app);
  });

  afterAll(async () => {
    await t.close();
  });

  const operation = (path: string) => document.paths[path].get as OperationObject;

  it('is committed as docs/openapi.json, exactly as the code generates it', () => {
    const committed = readFileSync(OPENAPI_FILE, 'utf8');
    // On a failure: `npm run openapi` writes the file again; commit it with the change.
    expect(committed).toBe(serializeOpenApiDocument(document));
  });

  it("is the README's list of operations, every one", () => {
    const readme = readFileSync(join(__dirname, '../../..', 'README.md'), 'utf8');
    const listed = /the (\w+) operations are ([^.]+)\./.exec(readme.replace(/\s+/g, ' '));
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item as Record<string, OperationObject>).map((op) => op.operationId),
    );
    expect(
      listed?.[2]
        .match(/`(\w+)`/g)
        ?.map((id) => id.slice(1, -1))
        .sort(),
    ).toEqual(ids.sort());
  });

  describe('GET /v1/openapi.json', () => {
    it('serves the document without a key, with the headers of every response', async () => {
      const response = await request(t.app.getHttpServer())
        .get('/v1/openapi.json')
        .set('X-Request-Id', 'openapi-1');

      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['x-request-id']).toBe('openapi-1');
      expect(response.body).toEqual(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')));
      // Outside the rate limit: nothing counted, nothing announced.
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    });
  });

  describe('GET /docs', () => {
    it('serves Swagger UI and its assets without a key, with the headers of every response', async () => {
      for (const [path, type] of [
        ['/docs', /^text\/html/],
        ['/docs/swagger-ui.css', /^text\/css/],
        ['/docs/swagger-ui-bundle.js', /javascript/],
        ['/docs/swagger-ui-init.js', /javascript/],
        ['/docs/swagger-ui-standalone-preset.js', /javascript/],
        ['/docs/favicon-32x32.png', /^image\/png/],
        ['/docs/favicon-16x16.png', /^image\/png/],
      ] as const) {
        const response = await request(t.app.getHttpServer()).get(path).set('X-Request-Id', 'd-1');

        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(type);
        expect(response.headers['cache-control']).toBe('no-store');
        expect(response.headers['x-request-id']).toBe('d-1');
      }
    });

    it('gives Swagger UI a script that parses, holding the document', async () => {
      const response = await request(t.app.getHttpServer())
        .get('/docs/swagger-ui-init.js')
        .buffer(true)
        .parse((res, done) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => done(null, text));
        });

      // Compiled, not run: a syntax error here is a blank /docs page.
      expect(() => new Script(response.body as string)).not.toThrow();
      expect(response.body).toContain('"operationId": "listCompanies"');
    });
  });

  it('redirects /docs/ to /docs, where the page finds its assets', async () => {
    for (const [path, location] of [
      ['/docs/', '/docs'],
      ['/docs/?x=1', '/docs?x=1'],
    ]) {
      const response = await request(t.app.getHttpServer()).get(path).set('X-Request-Id', 'r-1');

      expect(response.status).toBe(308);
      expect(response.headers.location).toBe(location);
      expect(response.headers['x-request-id']).toBe('r-1');
      expect(response.headers['cache-control']).toBe('no-store');
    }
  });

  it('leaves the 404 envelope of every other path unchanged', async () => {
    for (const [method, path] of [
      ['get', '/v1/openapi.json/extra'],
      ['get', '/v1/openapi.yaml'],
      ['get', '/docs-json'],
      ['get', '/docs/nope.js'],
      ['get', '/docs/LICENSE'],
      // What swagger-ui-dist holds beyond what the page loads.
      ['get', '/docs/package.json'],
      ['get', '/docs/README.md'],
      ['get', '/docs/swagger-ui-bundle.js.map'],
      ['get', '/docs/swagger-ui.css.map'],
      ['get', '/docs/swagger-ui.js'],
      ['get', '/docs/index.html'],
      ['get', '/docs/oauth2-redirect.html'],
      ['get', '/docs/docs/swagger-ui.css'],
      // Paths are case-sensitive.
      ['get', '/DOCS'],
      ['get', '/Docs/swagger-ui.css'],
      ['get', '/V1/openapi.json'],
      ['post', '/v1/openapi.json'],
    ] as const) {
      const response = await request(t.app.getHttpServer())[method](path);

      expect(`${path}: ${response.status}`).toBe(`${path}: 404`);
      expectErrorEnvelope(response, {
        status: 404,
        error: 'NOT_FOUND',
        path,
        message: 'Not Found',
      });
      expect(response.headers['cache-control']).toBe('no-store');
    }
  });

  it('is OpenAPI 3.0.3, version 1 of the API, with its title, description and servers', () => {
    expect(document.openapi).toBe('3.0.3');
    expect(document.info.version).toBe('1');
    expect(document.info.title).toBe('Visitor read API');
    const description = document.info.description ?? '';
    // The sync recipe (the change feeds), the rate limit and the key format are stated in words.
    expect(description).toContain('Keeping a copy in sync: the change feeds');
    expect(description).toContain('store `nextCursor`');
    expect(description).toContain('upsert by `id`, remove on');
    expect(description).toContain('120 requests per key per fixed one-minute window');
    expect(description).toContain('Retry-After');
    expect(description).toContain('`st_`');
    expect(description).toContain('`Cache-Control: no-store`');
    expect(document.servers).toEqual([
      { url: '/', description: expect.any(String), 'x-internal': false },
      {
        url: '{base_url}',
        description: expect.any(String),
        variables: { base_url: { default: 'http://localhost:3000' } },
        'x-internal': false,
      },
    ]);
  });

  it('describes the bearer key scheme', () => {
    expect(document.components?.securitySchemes).toEqual({
      bearer: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'st_ API key',
        description: expect.stringContaining('`st_` + at least 32 base62 characters'),
      },
    });
  });

  it('has exactly the GET operations of v1, with their ids, tags and the bearer key', () => {
    expect(Object.keys(document.paths).sort()).toEqual(
      [...OPERATIONS, ...STREAMS].map(([path]) => path).sort(),
    );
    for (const [path, operationId, tag] of [...OPERATIONS, ...STREAMS]) {
      expect(Object.keys(document.paths[path])).toEqual(['get']);
      expect(operation(path)).toMatchObject({
        operationId,
        tags: [tag],
        security: [{ bearer: [] }],
      });
    }
  });

  it.each([
    [
      '/v1/companies',
      [
        'intentLevel',
        'crmStatus',
        'minIntentScore',
        'country',
        'domain',
        'q',
        'visitedPage',
        'visitedSince',
      ],
    ],
    ['/v1/leads', ['intentLevel', 'status', 'minIntentScore', 'assignedToId']],
  ])('gives %s the same limit, offset and since, then its filters', (path, filters) => {
    const parameters = operation(path).parameters as ParameterObject[];
    expect(
      parameters.map((p) => `${p.in} ${p.name} ${p.required ? 'required' : 'optional'}`),
    ).toEqual([
      'query limit optional',
      'query offset optional',
      'query since optional',
      ...filters.map((name) => `query ${name} optional`),
      'query fields optional',
      'header X-Request-Id optional',
      'header If-None-Match optional',
    ]);
    // Several values of an enumeration's filter: one parameter, comma-separated.
    const intentLevel = parameters.find((p) => p.name === 'intentLevel');
    expect(intentLevel).toMatchObject({
      style: 'form',
      explode: false,
      schema: { type: 'array', items: { enum: ['hot', 'warm', 'cold'] } },
    });
    expect(parameters.slice(0, 3).map((p) => summary(p.schema as Schema))).toEqual([
      'integer int32 1..200 = 50',
      'integer int64 0..9007199254740991 = 0',
      'string date-time',
    ]);
    // The lookups' bounds (docs/api.md, "Lookups"), as the validation applies them.
    const bounds = (name: string) => parameters.find((p) => p.name === name);
    if (path === '/v1/companies') {
      expect(bounds('domain')).toMatchObject({
        style: 'form',
        explode: false,
        schema: { type: 'array', maxItems: 100, items: { minLength: 1, maxLength: 253 } },
      });
      expect(bounds('q')).toMatchObject({
        schema: { type: 'string', minLength: 3, maxLength: 200 },
      });
    }
    const since = parameters[2].description ?? '';
    expect(since).toContain('inclusive');
    expect(since).toContain('`lastSeen` >= `since`');
    expect(since).toContain('`createdAt` >= `since`');
  });

  it.each(['/v1/companies/changes', '/v1/leads/changes'])('gives %s cursor and limit', (path) => {
    const parameters = operation(path).parameters as ParameterObject[];
    expect(
      parameters.map((p) => `${p.in} ${p.name} ${p.required ? 'required' : 'optional'}`),
    ).toEqual([
      'query cursor optional',
      'query limit optional',
      'query fields optional',
      'header X-Request-Id optional',
      'header If-None-Match optional',
    ]);
    expect(parameters.slice(0, 2).map((p) => summary(p.schema as Schema))).toEqual([
      'string /^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$/',
      'integer int32 1..1000 = 200',
    ]);
  });

  it.each(['/v1/companies/{id}', '/v1/leads/{id}'])('gives %s its id and fields', (path) => {
    const parameters = operation(path).parameters as ParameterObject[];
    expect(
      parameters.map((p) => `${p.in} ${p.name} ${p.required ? 'required' : 'optional'}`),
    ).toEqual([
      'path id required',
      'query fields optional',
      'header X-Request-Id optional',
      'header If-None-Match optional',
    ]);
  });

  it.each([
    ['/v1/companies', selectableNames(COMPANY_SELECTABLE)],
    ['/v1/companies/{id}', selectableNames(COMPANY_SELECTABLE)],
    ['/v1/companies/changes', selectableNames(COMPANY_SELECTABLE)],
    ['/v1/companies/changes/stream', selectableNames(COMPANY_SELECTABLE)],
    ['/v1/leads', selectableNames(LEAD_SELECTABLE)],
    ['/v1/leads/{id}', selectableNames(LEAD_SELECTABLE)],
    ['/v1/leads/changes', selectableNames(LEAD_SELECTABLE)],
    ['/v1/leads/changes/stream', selectableNames(LEAD_SELECTABLE)],
  ])('gives %s `fields`, its names as an enumeration', (path, names) => {
    const fieldsParameter = (operation(path).parameters as ParameterObject[]).find(
      (p) => p.name === 'fields',
    );
    expect(fieldsParameter).toMatchObject({
      in: 'query',
      style: 'form',
      explode: false,
      schema: { type: 'array', items: { type: 'string', enum: names } },
    });
  });

  it('names every field and, for companies, the contacts whole and by field', () => {
    expect(selectableNames(LEAD_SELECTABLE)).toEqual(Object.keys(LEAD_FIELDS));
    expect(selectableNames(COMPANY_SELECTABLE)).toEqual([
      ...Object.keys(COMPANY_FIELDS),
      'contacts',
      ...Object.keys(CONTACT_FIELDS).map((field) => `contacts.${field}`),
    ]);
  });

  it('gives GET /v1/me no query parameter', () => {
    const parameters = operation('/v1/me').parameters as ParameterObject[];
    expect(parameters.filter((p) => p.in === 'query')).toEqual([]);
  });

  it.each(OPERATIONS)('documents every response of %s', (path, _id, _tag, okSchema, extra) => {
    const responses = operation(path).responses as Record<string, ResponseObject>;
    expect(Object.keys(responses).sort()).toEqual(
      ['200', '304', '400', '401', '429', '500', '503', ...extra].sort(),
    );

    // Every response has the envelope or the 200's schema, but the 304, which has no body.
    expect(responses[304].content).toBeUndefined();
    const bodies = Object.fromEntries(
      Object.entries(responses)
        .filter(([status]) => status !== '304')
        .map(([status, r]) => [status, summary(r.content?.['application/json'].schema as Schema)]),
    );
    expect(bodies).toEqual({
      200: okSchema,
      400: 'ErrorEnvelopeDto',
      401: 'ErrorEnvelopeDto',
      429: 'ErrorEnvelopeDto',
      500: 'ErrorEnvelopeDto',
      503: 'ErrorEnvelopeDto',
      ...Object.fromEntries(extra.map((status) => [status, 'ErrorEnvelopeDto'])),
    });

    const limited = {
      ...required({ ...RATE_LIMIT, ...IETF_RATE_LIMIT, ...EVERY_RESPONSE }),
      ...optional(KEY_EXPIRATION),
    };
    for (const status of extra.filter((status) => status !== '403')) {
      expect(headersOf(responses[status])).toEqual(limited);
    }
    // A restricted key's 403 comes before the limits: none of their headers.
    if (extra.includes('403' as never)) {
      expect(headersOf(responses[403])).toEqual({
        ...required({
          'WWW-Authenticate': 'string /^Bearer error="insufficient_scope", scope="[a-z: ]+"$/',
          ...EVERY_RESPONSE,
        }),
        ...optional(KEY_EXPIRATION),
      });
    }
    // The reads' validator, on their 200 and on the 304 that answers it.
    const validated = { ...limited, ...required({ ETag: 'string /^W/"[A-Za-z0-9_-]{27}"$/' }) };
    expect(headersOf(responses[200])).toEqual(validated);
    expect(headersOf(responses[304])).toEqual(validated);
    expect(headersOf(responses[400])).toEqual(limited);
    expect(headersOf(responses[401])).toEqual(
      required({ 'WWW-Authenticate': 'string (Bearer)', ...EVERY_RESPONSE }),
    );
    // The X-RateLimit headers come with the per-minute limit's 429, not the in-flight limit's;
    // the IETF fields with every 429, each naming the limit that refused.
    expect(headersOf(responses[429])).toEqual({
      ...required({ 'Retry-After': 'integer int32 1..60', ...IETF_RATE_LIMIT, ...EVERY_RESPONSE }),
      ...optional({ ...RATE_LIMIT, ...KEY_EXPIRATION }),
    });
    expect(headersOf(responses[500])).toEqual({
      ...optional({ ...RATE_LIMIT, ...IETF_RATE_LIMIT, ...KEY_EXPIRATION }),
      ...required(EVERY_RESPONSE),
    });
    // A 503 says when to retry: soon after shedding load, later after a database failure.
    expect(headersOf(responses[503])).toEqual({
      ...required({ 'Retry-After': 'integer int32 1..60' }),
      ...optional({ ...RATE_LIMIT, ...IETF_RATE_LIMIT, ...KEY_EXPIRATION }),
      ...required(EVERY_RESPONSE),
    });
  });

  it.each(STREAMS)('documents every response of %s as a stream', (path, _id, _tag, change) => {
    const responses = operation(path).responses as Record<string, ResponseObject>;
    expect(Object.keys(responses).sort()).toEqual(
      ['200', '400', '401', '403', '410', '429', '500', '503'].sort(),
    );
    // The lines: a change exactly as the feed's data, a checkpoint or the last line.
    expect(Object.keys(responses[200].content ?? {})).toEqual(['application/x-ndjson']);
    const line = responses[200].content?.['application/x-ndjson'].schema as Schema;
    expect(summary(line)).toBe(
      `${change} | ItemDeletedDto | ChangeStreamCheckpointDto | ChangeStreamEndDto`,
    );
    for (const status of ['400', '401', '403', '410', '429', '500', '503']) {
      expect(summary(responses[status].content?.['application/json'].schema as Schema)).toBe(
        'ErrorEnvelopeDto',
      );
    }
    // No validator: a stream is never answered with a 304.
    const limited = {
      ...required({ ...RATE_LIMIT, ...IETF_RATE_LIMIT, ...EVERY_RESPONSE }),
      ...optional(KEY_EXPIRATION),
    };
    expect(headersOf(responses[200])).toEqual(limited);
    expect(headersOf(responses[410])).toEqual(limited);
  });

  it('shows the exact fixed body of each error status as its example', () => {
    const example = (status: number) =>
      (operation('/v1/leads').responses[status] as ResponseObject).content?.['application/json']
        .example as { error: string; message: unknown };
    expect(example(401)).toMatchObject({ error: 'UNAUTHORIZED', message: 'Unauthorized' });
    expect(example(429)).toMatchObject({
      error: 'TOO_MANY_REQUESTS',
      message: 'Too Many Requests',
    });
    expect(example(500)).toMatchObject({
      error: 'INTERNAL_SERVER_ERROR',
      message: 'Internal server error',
    });
    expect(example(503)).toMatchObject({
      error: 'SERVICE_UNAVAILABLE',
      message: 'Service temporarily unavailable',
    });
  });

  describe('schemas: every field required, with its type, nullability, enum and bounds', () => {
    it('WorkspaceDto', () => {
      expect(fields(document, 'WorkspaceDto')).toEqual({
        id: 'string',
        name: 'string',
        plan: 'Plan',
      });
    });

    it('CompanyDto', () => {
      expect(fields(document, 'CompanyDto')).toEqual({
        id: 'string',
        name: 'string',
        domain: 'string',
        industry: 'string',
        size: 'string',
        country: 'string',
        city: 'string',
        revenue: 'string',
        siren: 'string | null',
        intentScore: 'number 0..100',
        intentLevel: 'IntentLevel',
        icpScore: 'number 0..100',
        commercialScore: 'number 0..100',
        crmStatus: 'CrmStatus',
        visitsCount: 'integer int32 0..2147483647',
        firstSeen: 'string date-time',
        lastSeen: 'string date-time',
        contacts: 'ContactDto[]',
      });
    });

    it('ContactDto', () => {
      expect(fields(document, 'ContactDto')).toEqual({
        id: 'string',
        name: 'string',
        jobTitle: 'string',
        email: 'string | null',
        phone: 'string | null',
        linkedin: 'string | null',
        seniority: 'Seniority',
      });
    });

    it('LeadDto', () => {
      expect(fields(document, 'LeadDto')).toEqual({
        id: 'string',
        companyId: 'string',
        companyName: 'string',
        contactName: 'string',
        contactTitle: 'string',
        intentScore: 'number 0..100',
        intentLevel: 'IntentLevel',
        signal: 'string',
        recommendedAction: 'string',
        status: 'LeadStatus',
        createdAt: 'string date-time',
        contactEmail: 'string | null',
        assignedToId: 'string | null',
      });
    });

    it.each([
      ['CompanyPageDto', 'CompanyDto | SelectedCompanyDto[]'],
      ['LeadPageDto', 'LeadDto | SelectedLeadDto[]'],
    ])('%s', (name, data) => {
      expect(fields(document, name)).toEqual({
        total: 'integer int64 0..9007199254740991',
        limit: 'integer int32 1..200',
        offset: 'integer int64 0..9007199254740991',
        data,
      });
    });

    // A read with `fields`: the same properties, only `id` required.
    it.each([
      ['SelectedCompanyDto', 'CompanyDto', { contacts: 'SelectedContactDto[]' }],
      ['SelectedContactDto', 'ContactDto', {}],
      ['SelectedLeadDto', 'LeadDto', {}],
    ])('%s', (name, whole, differing) => {
      const schema = document.components?.schemas?.[name] as SchemaObject;
      expect(schema.required).toEqual(['id']);
      const summarised = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([key, value]) => [key, summary(value)]),
      );
      expect(summarised).toEqual({ ...fields(document, whole), ...differing });
    });

    it('ErrorEnvelopeDto', () => {
      expect(fields(document, 'ErrorEnvelopeDto')).toEqual({
        statusCode: 'integer int32 400..599',
        message: 'string | string[]',
        error: 'string /^[A-Z][A-Z_]*$/',
        path: 'string',
        timestamp: 'string date-time',
      });
    });

    it.each([
      ['Plan', ['growth', 'starter']],
      ['IntentLevel', ['hot', 'warm', 'cold']],
      ['CrmStatus', ['new', 'qualified', 'in_crm', 'contacted', 'won', 'lost']],
      ['Seniority', ['c_level', 'vp', 'director', 'manager', 'ic']],
      ['LeadStatus', ['new', 'contacted', 'qualified', 'converted', 'dismissed']],
    ])('the enumeration %s', (name, values) => {
      expect(document.components?.schemas?.[name]).toMatchObject({ type: 'string', enum: values });
    });
  });
});

describe('with a limit of 2 requests per minute per key and per address', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: { RATE_LIMIT_PER_MINUTE: '2', AUTH_FAILURE_LIMIT_PER_MINUTE: '2' },
    });
  });

  afterAll(async () => {
    await t.close();
  });

  beforeEach(async () => {
    ({ key } = await createTenant(t.prisma));
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  const http = () => request(t.app.getHttpServer());

  describe('the document and its page are outside the rate limit', () => {
    it('does not count them against the key', async () => {
      for (const path of ['/v1/openapi.json', '/docs', '/docs/swagger-ui.css']) {
        for (let i = 0; i < 3; i++) {
          expect((await http().get(path).set('Authorization', `Bearer ${key}`)).status).toBe(200);
        }
      }

      const first = await getWithKey(t.app, '/v1/me', key);
      expect(first.status).toBe(200);
      expect(first.headers['x-ratelimit-remaining']).toBe('1');
    });

    it('serves them to a key whose budget is spent', async () => {
      await getWithKey(t.app, '/v1/me', key);
      await getWithKey(t.app, '/v1/me', key);
      expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(429);

      const response = await http().get('/v1/openapi.json').set('Authorization', `Bearer ${key}`);
      expect(response.status).toBe(200);
      expect(response.body.info.version).toBe('1');
    });

    it('does not count a bad key sent with them as a failed authentication', async () => {
      for (const authorization of ['Bearer st_not-a-key', 'Basic abc', 'Bearer']) {
        for (let i = 0; i < 3; i++) {
          const response = await http().get('/v1/openapi.json').set('Authorization', authorization);
          expect(response.status).toBe(200);
        }
      }

      // The address's budget of failures (2) is whole: a bad key on the API is still a 401.
      const refused = await http().get('/v1/me').set('Authorization', 'Bearer st_not-a-key');
      expect(refused.status).toBe(401);
    });
  });

  // The check that every e2e response matches the document (support/openapi-contract.ts) must
  // itself be able to fail: each case below breaks one response and expects it to be reported.
  describe('the e2e suite’s contract check', () => {
    it('reports a 200 body that does not match its schema', async () => {
      jest.spyOn(CompaniesService.prototype, 'list').mockResolvedValueOnce({
        json: jsonText(
          JSON.stringify({ total: 1, limit: 50, offset: 0, data: [{ name: 'Acme' }] }),
        ),
        version: '1',
      });

      expect((await getWithKey(t.app, '/v1/companies', key)).status).toBe(200);

      expect(takeContractViolations()).toEqual([
        expect.stringMatching(/^GET \/v1\/companies -> 200: .*data\/0 must have required property/),
      ]);
    });

    it('reports a 5xx body that is not the envelope', async () => {
      jest.spyOn(CompaniesService.prototype, 'list').mockRejectedValueOnce(new Error('boom'));
      // A message that is neither a string nor an array of strings. (The filter's `catch` itself
      // cannot be replaced once the app is initialised: Nest has bound it.)
      jest
        .spyOn(AllExceptionsFilter.prototype as unknown as { messageOf(): unknown }, 'messageOf')
        .mockReturnValueOnce(42);

      expect((await getWithKey(t.app, '/v1/companies', key)).status).toBe(500);

      expect(takeContractViolations()).toEqual([
        'GET /v1/companies -> 500: the body does not match its schema: /body/message must be string',
      ]);
    });

    it('reports a required header that is missing', async () => {
      // A 200 without the X-RateLimit headers that the contract promises on it (the throttler,
      // which sets them, skipped).
      const throttled = jest
        .spyOn(RateLimitGuard.prototype, 'canActivate')
        .mockResolvedValueOnce(true);

      expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(200);
      expect(throttled).toHaveBeenCalled();

      expect(takeContractViolations()).toEqual([
        'GET /v1/me -> 200: the X-RateLimit-Limit header is missing',
        'GET /v1/me -> 200: the X-RateLimit-Remaining header is missing',
        'GET /v1/me -> 200: the X-RateLimit-Reset header is missing',
      ]);
    });

    it('reports a header whose value does not match its schema', async () => {
      jest.spyOn(rateLimitHeaders, 'setRateLimitHeaders').mockImplementation((response) => {
        response.setHeader('X-RateLimit-Limit', 2);
        response.setHeader('X-RateLimit-Remaining', -1);
        response.setHeader('X-RateLimit-Reset', 'soon');
        response.setHeader('Retry-After', 60);
      });
      await getWithKey(t.app, '/v1/me', key);
      await getWithKey(t.app, '/v1/me', key);

      expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(429);

      // The same headers are written for each answer: the two 200s and the 429.
      expect(takeContractViolations()).toEqual(
        ['200', '200', '429'].flatMap((status) => [
          `GET /v1/me -> ${status}: the X-RateLimit-Remaining header (-1) does not match its schema`,
          `GET /v1/me -> ${status}: the X-RateLimit-Reset header (soon) does not match its schema`,
        ]),
      );
    });

    it('reports a documented operation that does not answer JSON', async () => {
      jest.spyOn(CompaniesService.prototype, 'list').mockResolvedValueOnce(undefined as never);

      await getWithKey(t.app, '/v1/companies', key);

      expect(takeContractViolations()).toEqual([
        'GET /v1/companies -> 200: not answered with JSON',
      ]);
    });

    it('leaves paths outside the document alone', async () => {
      expect((await getWithKey(t.app, '/v1/nope', key)).status).toBe(404);
      expect((await http().get('/docs')).status).toBe(200);

      expect(takeContractViolations()).toEqual([]);
    });
  });
});
