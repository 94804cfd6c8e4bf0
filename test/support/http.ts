import type { INestApplication } from '@nestjs/common';
import request, { type Response, type Test } from 'supertest';
import type { PrismaClient, Workspace } from '../../src/generated/prisma/client';
import { createApiKey, createWorkspace } from './factories';

/** Every date-time of a response: ISO 8601 in UTC, with milliseconds and `Z`. */
export const ISO_UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Percent-encodes every byte of the UTF-8 text but unreserved characters (which browsers do not):
 * one of the ways the generated tests write a query's values.
 */
export const encodeAll = (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/** A workspace of its own and a fresh key: no other test's rows, a full rate-limit budget. */
export async function createTenant(
  db: PrismaClient,
  overrides: Partial<Workspace> = {},
): Promise<{ workspace: Workspace; key: string }> {
  const workspace = await createWorkspace(db, overrides);
  const { key } = await createApiKey(db, workspace.id);
  return { workspace, key };
}

/** `GET path` (query string sent as written) with the key as a bearer token. */
export function getWithKey(app: INestApplication, path: string, key: string): Test {
  return request(app.getHttpServer()).get(path).set('Authorization', `Bearer ${key}`);
}

/** The error envelope of the contract, exactly: these five fields and no other. */
export function expectErrorEnvelope(
  response: Response,
  expected: { status: number; error: string; path: string; message?: unknown },
): void {
  expect(response.status).toBe(expected.status);
  expect(response.body).toStrictEqual({
    statusCode: expected.status,
    message: expected.message ?? expect.anything(),
    error: expected.error,
    path: expected.path,
    timestamp: expect.stringMatching(ISO_UTC_MILLIS),
  });
  expect(Number.isNaN(Date.parse(response.body.timestamp as string))).toBe(false);
}

/** A 400 of parameter validation: the envelope, with `message` an array of strings. */
export function expectValidationError(response: Response, path: string): string[] {
  expectErrorEnvelope(response, {
    status: 400,
    error: 'BAD_REQUEST',
    path,
    message: expect.arrayContaining([]),
  });
  const message = response.body.message as unknown[];
  expect(Array.isArray(message)).toBe(true);
  expect(message.length).toBeGreaterThan(0);
  for (const entry of message) expect(typeof entry).toBe('string');
  return message as string[];
}

/**
 * The ids of a whole list read page by page with `limit=pageSize`, until `offset` reaches `total`.
 * Each page must echo the applied limit and offset and report the same total.
 */
export async function pageThrough(
  app: INestApplication,
  listPath: string,
  key: string,
  pageSize: number,
): Promise<string[]> {
  const ids: string[] = [];
  let total: number | undefined;
  for (let offset = 0; total === undefined || offset < total; offset += pageSize) {
    const response = await getWithKey(app, `${listPath}?limit=${pageSize}&offset=${offset}`, key);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ limit: pageSize, offset });
    total ??= response.body.total as number;
    expect(response.body.total).toBe(total);
    const page = response.body.data as { id: string }[];
    expect(page.length).toBe(Math.min(pageSize, total - offset));
    ids.push(...page.map((item) => item.id));
  }
  return ids;
}
