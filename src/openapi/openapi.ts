import { type INestApplication, NotFoundException } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { join } from 'node:path';
import { DOCS_PATH } from '../http/security-headers';
import { CompaniesModule } from '../companies/companies.module';
import { LeadsModule } from '../leads/leads.module';
import { MeModule } from '../me/me.module';
import { VisitsModule } from '../visits/visits.module';
import { API_DESCRIPTION, API_KEY_DESCRIPTION } from './api-description';

/** Where `npm run openapi` writes the document for integrators (committed). */
export const OPENAPI_FILE = join(__dirname, '..', '..', 'docs', 'openapi.json');

/**
 * The published contract, generated from the controllers and DTOs. OpenAPI 3.0.3, not 3.1:
 * @nestjs/swagger 11 writes nullable fields as `nullable: true`, which 3.1 no longer knows.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.0.3')
    .setTitle('Visitor read API')
    .setDescription(API_DESCRIPTION)
    .setVersion('1')
    .addServer(
      '/',
      'The host that serves this document, in whichever environment (local, staging or production)',
    )
    .addServer(
      '{base_url}',
      'A deployment of the service (the production host is not deployed yet)',
      {
        base_url: { default: 'http://localhost:3000' },
      },
    )
    // bearerFormat would otherwise default to JWT, which these keys are not.
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'st_ API key',
      description: API_KEY_DESCRIPTION,
    })
    .addTag('workspace', 'Checking a key')
    .addTag('companies', 'Identified companies and their contacts')
    .addTag('leads', 'Qualified leads')
    .addTag('visits', 'Visits and their page views: the evidence behind the intent score')
    .build();
  // package.json's UNLICENSED: no licence is granted (DocumentBuilder's setLicense wants a URL).
  config.info.license = { name: 'Proprietary' };
  // Only the public API's modules: whatever else the application serves (health probes) is not
  // part of the contract unless it is added here.
  const document = SwaggerModule.createDocument(app, config, {
    include: [MeModule, CompaniesModule, LeadsModule, VisitsModule],
  });
  // Every server is the public API, for integrators (OWASP API9: each server states its audience).
  document.servers = document.servers?.map((server) => ({ ...server, 'x-internal': false }));
  return document;
}

/** The committed file's exact text, so that a test can compare it byte for byte. */
export function serializeOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * `GET /v1/openapi.json` and the Swagger UI at `GET /docs`, its assets served from node_modules
 * (no CDN). SwaggerModule registers plain express routes: they run after the middleware already
 * installed (response headers) but before Nest's guards, so they need no key and are outside the
 * rate limit; any other path still ends in Nest's 404 envelope.
 */
export function serveApiDocs(app: NestExpressApplication, document: OpenAPIObject): void {
  app.use(DOCS_PATH, serveOnlyThePage);
  // DOCS_PATH: the path whose Content-Security-Policy lets Swagger UI's page run.
  SwaggerModule.setup(DOCS_PATH, app, document, {
    jsonDocumentUrl: 'v1/openapi.json',
    raw: ['json'],
    customSiteTitle: 'Visitor read API v1',
    swaggerOptions: { displayOperationId: true },
  });
}

// What the page that @nestjs/swagger builds loads, besides itself: the rest of swagger-ui-dist
// (its package.json, README.md, source maps, the other bundles, index.html) is not served.
const DOCS_ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'swagger-ui-init.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

/**
 * In front of SwaggerModule's routes and static files under `/docs`: the page at `/docs`, its
 * assets, and nothing else (the 404 envelope). `/docs/` is redirected to `/docs` (308), where the
 * page's relative asset paths resolve; as Swagger serves it, it is a blank page.
 */
function serveOnlyThePage(request: Request, response: Response, next: NextFunction): void {
  const [path, query = ''] = request.originalUrl.split(/(?=\?)/, 2);
  if (path === `${DOCS_PATH}/`) {
    response.redirect(308, `${DOCS_PATH}${query}`);
    return;
  }
  if (path === DOCS_PATH || DOCS_ASSETS.has(path.slice(DOCS_PATH.length + 1))) return next();
  next(new NotFoundException());
}
