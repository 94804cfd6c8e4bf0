import { NestFactory } from '@nestjs/core';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AppModule } from '../app.module';
import { buildOpenApiDocument, OPENAPI_FILE, serializeOpenApiDocument } from './openapi';

/** `npm run openapi`: writes the published contract to docs/openapi.json for integrators. */
async function main(): Promise<void> {
  // Preview: the modules are scanned but no provider is created, so neither a database nor the
  // environment is needed to describe the API.
  const app = await NestFactory.create(AppModule, { preview: true, logger: false });
  mkdirSync(dirname(OPENAPI_FILE), { recursive: true });
  writeFileSync(OPENAPI_FILE, serializeOpenApiDocument(buildOpenApiDocument(app)));
  console.log(`Wrote ${OPENAPI_FILE}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
