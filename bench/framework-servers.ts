import 'reflect-metadata';
import { Controller, Get, Module, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, Request, Response } from 'express';
import { answerBare } from './bare-handler';

/*
 * The framework's own floor, between the bare server and the service: Express alone
 * (`FRAMEWORK=express`) and NestJS on Express alone (`FRAMEWORK=nest`, nothing global). Workload
 * (z)'s probe is answered by the framework (res.json; a controller returning the object); the
 * workloads with a key ((a), (e), (f)) are routed by the framework to the bare server's own
 * handler (bare-handler.ts), so that what they cost above the bare server is the framework's
 * routing alone, and what the service spends above them is its own (docs/benchmarks.md, "The
 * fixed cost of a request").
 */
const BODY = { status: 'ok', info: {}, error: {}, details: {} };
const port = Number(process.env.PORT ?? 3000);
const KEYED = ['/v1/me', '/v1/companies', '/v1/leads'];

// /health/ready too: what the runner polls until a server is up (servers.ts).
@Controller()
class FrameworkController {
  @Get(['health/live', 'health/ready'])
  live(): typeof BODY {
    return BODY;
  }

  @Get(KEYED)
  keyed(@Req() request: Request, @Res() response: Response): void {
    answerBare(request, response);
  }
}

@Module({ controllers: [FrameworkController] })
class FrameworkModule {}

async function main(): Promise<void> {
  const adapter = new ExpressAdapter();
  if (process.env.FRAMEWORK === 'express') {
    const app = adapter.getInstance<Express>();
    app.get(['/health/live', '/health/ready'], (_request, response) => void response.json(BODY));
    app.get(KEYED, (request, response) => answerBare(request, response));
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
