import { CHECKSUM_LENGTH, KEY_PREFIX, RANDOM_LENGTH } from '../auth/api-key';
import { MAX_CHANGES_LIMIT } from '../changes/changes-query.dto';
import { Environment } from '../config/environment';
import { COMPRESSION } from '../http/compression';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/list-query.dto';

// The prose of the published contract (Markdown, shown at the top of /docs): what the schemas and
// responses cannot say by themselves, from the contract (docs/api.md). Its numbers are the
// configuration's defaults and the code's constants, as the operations' prose
// (http/api-responses.decorator.ts), so that the text cannot drift from them.
const {
  RATE_LIMIT_PER_MINUTE: PER_MINUTE,
  AUTH_FAILURE_LIMIT_PER_MINUTE: AUTH_FAILURES,
  MAX_IN_FLIGHT_PER_WORKSPACE: IN_FLIGHT,
  CHANGES_RETENTION_DAYS: RETENTION_DAYS,
} = new Environment();

export const API_DESCRIPTION = `
Read-only HTTP/JSON API over the companies identified as visitors of a customer's website, their
contacts, and the qualified leads derived from them. Every request is tied to one workspace (the
customer account) by its API key, and every response concerns that workspace only.

## Authentication

Send \`Authorization: Bearer <API_KEY>\` with every request. A key is \`${KEY_PREFIX}\` followed by at
least ${RANDOM_LENGTH} base62 characters of randomness and a ${CHECKSUM_LENGTH}-character base62 checksum (CRC32) of what
precedes it, so that secret scanners recognise a leaked key and a mistyped one is refused at once.
API access comes with the \`growth\` plan; the \`starter\` plan has none.

Keys are created, named and revoked in the customer application (Administration, Tracking
section), not through this API. Create one key per use, so that revoking one interrupts nothing
else. A key is displayed once, at creation, and cannot be retrieved afterwards, not even by
support: revoke a lost key and create a new one. \`GET /v1/me\` answering 200 means that the key is
valid and targets that workspace.

A missing, malformed, unknown or revoked key, a workspace on a plan without API access and a
suspended workspace all get the same 401 (\`WWW-Authenticate: Bearer\`, message
\`Unauthorized\`), so that the reason cannot be told. The key is checked before the parameters: a
bad key with bad parameters is a 401.

## Pagination and order

Both lists are sorted by \`intentScore\` descending, ties broken by \`id\` ascending, so that the
first page holds the hottest accounts and paging an unchanged data set with \`offset\` never
repeats or skips an item. \`limit\` is 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}), \`offset\` 0 or more (default 0);
the envelope echoes the values applied and \`total\` counts every match across pages. An
\`offset\` past the end gives \`data: []\` with the true \`total\`.

## Keeping a copy in sync: the change feeds

\`GET /v1/companies/changes\` and \`GET /v1/leads/changes\` give every change of the workspace's
companies and leads, deletions included, in an order that never skips one whatever the order in
which concurrent writers commit.

1. Start without \`cursor\`: every live item comes as \`{"op": "upsert", "id", "changedAt",
   "company"}\` (\`lead\` on the leads feed), \`limit\` up to ${MAX_CHANGES_LIMIT} per page.
2. Apply the page (upsert by \`id\`, remove on \`{"op": "delete"}\`), then store \`nextCursor\`.
3. While \`hasMore\` is true, ask again with \`cursor=<nextCursor>\` (after a short wait when
   \`data\` was empty: changes are then held back behind an older transaction still running).
   When it is false you have caught up: poll later with the stored cursor.

Each item appears once, at its latest change, as it is now; an update that changes nothing is not
a change. A change to a contact is a change of its company, a change of a company's name one of its
leads, and deleting a company deletes its leads. A cursor is tied to its feed and workspace (any
other is a 400, \`cursor is not valid\`); one behind deletion records pruned after the retention
(${RETENTION_DAYS} days by default) is a 410 (\`GONE\`): start again without a cursor and replace the copy.
\`GET /v1/companies/{id}\` and \`GET /v1/leads/{id}\` read one item (404 outside the workspace).

The lists can also be paged with \`since\` (inclusive: companies' \`lastSeen\`, leads'
\`createdAt\`) and \`offset\`, but such a pass loses items whenever the data changes during it
(an item shifts past a page boundary) and never sees a deletion: use the feeds to keep a copy.
On a 429, wait \`Retry-After\` seconds and resume.

## Rate limit

${PER_MINUTE} requests per key per fixed one-minute window; a window starts with the key's first request in
it. Every authenticated request counts, whatever its status, and two keys of one workspace have
separate budgets. The limit holds across all instances of the service. Every response to an
authenticated request carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (whole seconds until the window resets); past the limit the answer is a 429
with \`Retry-After\` and \`X-RateLimit-Remaining: 0\`. Requests that fail authentication are
limited per client address (${AUTH_FAILURES} per minute), with the same 429. The same responses state the
limits in the IETF draft's fields too: \`RateLimit-Policy: "in-flight";q=${IN_FLIGHT};qu="concurrent-requests",
"per-minute";q=${PER_MINUTE};w=60\` and \`RateLimit: "in-flight";r=${IN_FLIGHT - 1}, "per-minute";r=${PER_MINUTE - 2};t=42\`.

## Parameters

\`limit\` and \`offset\` are plain decimal integers (\`1.5\`, \`1e2\`, \`abc\` or an empty value
are refused). \`since\` is an ISO 8601 date or date-time; one without an offset is read as UTC.
A parameter given twice, or any parameter an endpoint does not define (\`GET /v1/me\` defines
none), is a 400.

## Data

Every date-time is ISO 8601 in UTC with milliseconds and \`Z\` (\`2026-03-01T09:30:00.000Z\`).
Scores are numbers from 0 to 100 inclusive. Every field of the schemas is always present:
the nullable ones are \`null\` when unknown, never omitted.

## Errors

Every error has the body \`{statusCode, message, error, path, timestamp}\` (schema
\`ErrorEnvelopeDto\`): 400 for invalid parameters (\`message\` is then an array with one entry per
violated constraint, each naming the parameter), 401, 404 (\`NOT_FOUND\`) for an unknown path
or method and for an id that is not an item of the workspace, 410 (\`GONE\`) for an expired feed
cursor, 429, 503 when the service sheds load or the database is unreachable or timing out
(\`Service temporarily unavailable\`; retry after \`Retry-After\` seconds), and 500 for any other
failure (\`Internal server error\`, with no internal detail).

## Headers of every response

\`Content-Type: application/json; charset=utf-8\`, \`Cache-Control: no-store\` (the data is
private to a workspace), \`Vary: Accept-Encoding\`, and \`X-Request-Id\`: yours when you sent a
sane one, otherwise a generated one; the server logs it with the request. A body of ${COMPRESSION.thresholdBytes / 1024} KiB or more
comes compressed (\`Content-Encoding: br\` or \`gzip\`, with its exact \`Content-Length\`) when
your \`Accept-Encoding\` allows it: ask for \`br, gzip\` (a page of 200 companies, ~200 KB of
JSON, is ~36 KB in br).

## Conditional requests

Every 200 of a read carries a weak \`ETag\`. Send it back as \`If-None-Match\` with the same
request: while the body would be the same, the answer is a 304 without body, which is not counted
against the per-minute limit. For the lists and single reads the 304 is cheap (the page is not
read); the ETag changes with any write of the workspace's data, whatever the order in which
writers commit.

## Versioning

The version is in the path prefix \`/v1\`; this document describes version \`1\`. The change
feeds and single-item reads were added to it without changing anything that was there.
`.trim();

export const API_KEY_DESCRIPTION =
  `An API key of the workspace: \`${KEY_PREFIX}\` + at least ${RANDOM_LENGTH} base62 characters + ` +
  `a ${CHECKSUM_LENGTH}-character base62 CRC32 checksum, e.g. \`${KEY_PREFIX}4fJx...Qz81aB\`. ` +
  'Created in the customer application (Administration, Tracking section) and shown only once.';
