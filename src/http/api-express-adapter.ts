import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';

/**
 * NestJS's Express adapter, with the reads of /v1 sent with their ETag: a request their guard
 * marked (items/conditional-read.guard.ts) has its handler's result turned into the body and its
 * ETag here, where NestJS sends every handler's result, or into the 304 (thrown, and answered by
 * the exception filter like any error of the handler).
 */
export class ApiExpressAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    const read = response.req.conditionalRead;
    if (read === undefined) return super.reply(response, body, statusCode) as unknown;
    return read
      .answer(response.req, response, body)
      .then((text) => super.reply(response, text, statusCode) as unknown);
  }
}
