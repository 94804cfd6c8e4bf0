import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/*
 * The framework's own floor for workload (z), between the bare server and the service: Express
 * alone (`FRAMEWORK=express`: one route answering the probe's JSON with res.json), and NestJS on
 * Express alone (`FRAMEWORK=nest`: one controller returning it, nothing global). What the service
 * spends above the second is its own (docs/benchmarks.md, "The fixed cost of a request").
 */
const BODY = { status: 'ok', info: {}, error: {}, details: {} };
const port = Number(process.env.PORT ?? 3000);

// /health/ready too: what the runner polls until a server is up (servers.ts).
@Controller('health')
class HealthController {
  @Get(['live', 'ready'])
  live(): typeof BODY {
    return BODY;
  }
}

@Module({ controllers: [HealthController] })
class FrameworkModule {}

async function main(): Promise<void> {
  const adapter = new ExpressAdapter();
  if (process.env.FRAMEWORK === 'express') {
    const app = adapter.getInstance<Express>();
    app.get(['/health/live', '/health/ready'], (_request, response) => void response.json(BODY));
    app.listen(port);
    return;
  }
  const app = await NestFactory.create(FrameworkModule, adapter, {
    logger: false,
    bodyParser: false,
  });
  await app.listen(port);
}

void main();
