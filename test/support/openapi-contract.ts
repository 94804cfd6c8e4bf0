import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject, OperationObject, ResponseObject } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
// The library's own Ajv set-up (OpenAPI 3.0 keywords such as `nullable`, its formats), for what
// its middleware leaves unchecked. Not its public API: an upgrade that moves it fails at import.
import { createResponseAjv } from 'express-openapi-validator/dist/framework/ajv';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { decodes } from '../../src/http/literal-path';
import { recordContractViolation } from './contract-violations';

/** True, or what is wrong (Ajv's first error: the path in the data and the message). */
type Validate = (data: unknown) => true | string;
type Check = (response: Response, body: unknown) => string[];

/**
 * Checks every response of a test app against the OpenAPI document and records each mismatch:
 * - express-openapi-validator validates the bodies of statuses below 500 (its JSON hook returns
 *   early for 5xx statuses, by design);
 * - the check below validates the bodies of 5xx responses, the bodies sent as JSON text already
 *   serialized (the lists', which PostgreSQL writes: the library only sees `res.json`), the
 *   headers that each documented response marks `required` (and their values), and that a
 *   documented operation answers JSON.
 * Paths the document does not describe (an unknown path's 404, /docs, health probes) are left
 * alone, as are methods it does not describe (POST /v1/companies is a 404 of the router).
 */
export function installContractCheck(app: NestExpressApplication, document: OpenAPIObject): void {
  const apiSpec = structuredClone(document) as unknown as OpenAPIV3.DocumentV3;
  const validator = OpenApiValidator.middleware({
    apiSpec,
    validateRequests: false, // the suite sends invalid requests on purpose
    validateSecurity: false, // the application's guard owns authentication
    validateResponses: {
      onError: (error, _body, request) => record(request, request.res?.statusCode, error.message),
    },
    ignoreUndocumented: true,
    fileUploader: false,
  });
  for (const middleware of validator) {
    // An error of the validator itself (an invalid document) is a violation too, not a bare 500.
    app.use((request: Request, response: Response, next: NextFunction) => {
      // The validator reads the path as received and cannot decode a malformed one, which the
      // application reads literally (src/http/literal-path.ts): the check below still runs.
      if (!decodes(request.originalUrl.split('?')[0])) return next();
      void middleware(request, response, (error?: unknown) => {
        if (error) {
          const message = error instanceof Error ? error.message : JSON.stringify(error);
          record(request, undefined, `the validator failed: ${message}`);
        }
        next(error);
      });
    });
  }
  app.use(checkBeyondTheValidator(document));
}

function checkBeyondTheValidator(document: OpenAPIObject) {
  const options = { strict: false, formats: {}, ajvFormats: { mode: 'fast' as const } };
  const bodies = createResponseAjv(structuredClone(document) as never, options);
  // Header values are text: "120" must pass for an integer.
  const headers = createResponseAjv(structuredClone(document) as never, {
    ...options,
    coerceTypes: true,
  });
  const compile = (ajv: typeof bodies, schema: object): Validate => {
    const validate = ajv.compile({ ...schema, components: document.components });
    return (data) => {
      if (validate(data)) return true;
      const [first] = validate.errors ?? [];
      return first ? `${first.instancePath} ${first.message ?? ''}`.trim() : 'invalid';
    };
  };

  // Per operation and status: the check of a body given to res.json, and of JSON text sent as is.
  // Literal paths by key; templated ones (`/v1/companies/{id}`) as patterns, tried after them, as
  // the routes are declared (`/v1/companies/changes` before `/v1/companies/:id`).
  type Checks = { json: Check; text: Check; ndjson: Check; headers: Check };
  const checks = new Map<string, Map<number, Checks>>();
  const templated: { method: string; pattern: RegExp; key: string }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      const operation: OperationObject | undefined = item[method];
      if (!operation) continue;
      const byStatus = new Map<number, Checks>();
      for (const [status, response] of Object.entries(operation.responses)) {
        byStatus.set(Number(status), {
          json: checkOf(response as ResponseObject, Number(status) >= 500),
          text: checkOf(response as ResponseObject, true),
          ndjson: checkOf(response as ResponseObject, true, 'application/x-ndjson'),
          headers: checkOf(response as ResponseObject, false),
        });
      }
      const key = `${method.toUpperCase()} ${path}`;
      checks.set(key, byStatus);
      if (path.includes('{')) {
        const source = path
          .split(/\{[^}]+\}/)
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]+');
        templated.push({ method: method.toUpperCase(), pattern: new RegExp(`^${source}$`), key });
      }
    }
  }

  function checkOf(
    response: ResponseObject,
    validateBody: boolean,
    type = 'application/json',
  ): Check {
    const schema = response.content?.[type]?.schema;
    const body =
      validateBody &&
      schema &&
      compile(bodies, { properties: { body: schema }, required: ['body'] });
    const documented = Object.entries(response.headers ?? {}).map(([name, header]) => {
      if ('$ref' in header || !header.schema) {
        throw new Error(`inline header schemas only: ${name}`);
      }
      const value = compile(headers, { properties: { value: header.schema } });
      return { name, required: header.required === true, value };
    });
    return (response, data) => {
      const problems: string[] = [];
      const verdict = body ? body({ body: data }) : true;
      if (verdict !== true) problems.push(`the body does not match its schema: ${verdict}`);
      for (const header of documented) {
        const sent = response.getHeader(header.name);
        if (sent === undefined) {
          if (header.required) problems.push(`the ${header.name} header is missing`);
        } else if (header.value({ value: String(sent) }) !== true) {
          problems.push(`the ${header.name} header (${String(sent)}) does not match its schema`);
        }
      }
      return problems;
    };
  }

  return (request: Request, response: Response, next: NextFunction): void => {
    // The routes are case-sensitive (app.setup.ts) and ignore a trailing slash: so does this lookup.
    const path = request.path.replace(/(.)\/+$/, '$1');
    const key = checks.has(`${request.method} ${path}`)
      ? `${request.method} ${path}`
      : templated.find(({ method, pattern }) => method === request.method && pattern.test(path))
          ?.key;
    const byStatus = key === undefined ? undefined : checks.get(key);
    if (!byStatus) return next();
    let answeredWithJson = false;
    const checkBody = (kind: keyof Checks, body: unknown): void => {
      answeredWithJson = true;
      const check = byStatus.get(response.statusCode);
      // An undocumented status below 500 is reported by the validator already, for res.json.
      if (!check && (response.statusCode >= 500 || kind === 'text')) {
        record(request, response.statusCode, 'undocumented');
      }
      for (const problem of check?.[kind](response, body) ?? []) {
        record(request, response.statusCode, problem);
      }
    };
    const json = response.json.bind(response);
    response.json = (body: unknown) => {
      checkBody('json', body);
      return json(body);
    };
    // res.json ends in res.send with the serialized text: only text sent directly is checked here.
    const send = response.send.bind(response);
    response.send = (body?: unknown) => {
      const type = String(response.getHeader('content-type') ?? '');
      if (!answeredWithJson && typeof body === 'string' && type.startsWith('application/json')) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          record(request, response.statusCode, 'the body is not valid JSON');
        }
        checkBody('text', parsed);
      }
      return send(body);
    };
    // Newline-delimited JSON (the change streams): each line against the schema of a line, once
    // the stream ends; the lines of a compressed one are not read.
    const written: Buffer[] = [];
    const isNdjson = () =>
      String(response.getHeader('content-type') ?? '').startsWith('application/x-ndjson');
    const collect = (chunk: unknown) => {
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) written.push(Buffer.from(chunk));
    };
    const write = response.write.bind(response);
    response.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (isNdjson()) collect(chunk);
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof response.write;
    // At end() rather than on 'finish', which may come after the client has the response.
    const end = response.end.bind(response);
    response.end = ((...args: Parameters<typeof end>) => {
      if (isNdjson()) {
        if (typeof args[0] !== 'function') collect(args[0]);
        answeredWithJson = true;
        const compressed = response.getHeader('content-encoding') !== undefined;
        const lines = compressed ? [] : Buffer.concat(written).toString('utf8').split('\n');
        if (lines.at(-1) === '') lines.pop();
        checkBody('headers', undefined);
        for (const line of lines) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(line);
          } catch {
            record(request, response.statusCode, `a line is not valid JSON: ${line.slice(0, 80)}`);
          }
          const problems = byStatus.get(response.statusCode)?.ndjson(response, parsed) ?? [];
          for (const problem of problems.filter((text) => text.startsWith('the body'))) {
            record(request, response.statusCode, `a line: ${problem}`);
          }
        }
      }
      // A 304 has no body (RFC 9110, 15.4.5), and the document gives it none.
      if (!answeredWithJson && response.statusCode !== 304) {
        record(request, response.statusCode, 'not answered with JSON');
      }
      return end(...args);
    }) as typeof response.end;
    next();
  };
}

function record(request: Request, status: number | undefined, problem: string): void {
  recordContractViolation(
    `${request.method} ${request.originalUrl} -> ${status ?? '?'}: ${problem}`,
  );
}
