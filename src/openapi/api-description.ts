// The prose of the published contract (Markdown, shown at the top of /docs): what the schemas and
// responses cannot say by themselves, from the contract (docs/api.md).

export const API_DESCRIPTION = `
Read-only HTTP/JSON API over the companies identified as visitors of a customer's website, their
contacts, and the qualified leads derived from them. Every request is tied to one workspace (the
customer account) by its API key, and every response concerns that workspace only.

## Authentication

Send \`Authorization: Bearer <API_KEY>\` with every request. A key is \`st_\` followed by at
least 32 base62 characters of randomness and a 6-character base62 checksum (CRC32) of what
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
repeats or skips an item. \`limit\` is 1 to 200 (default 50), \`offset\` 0 or more (default 0);
the envelope echoes the values applied and \`total\` counts every match across pages. An
\`offset\` past the end gives \`data: []\` with the true \`total\`.

## Synchronisation recipe

1. Note the current time **before** you start reading (\`started = now()\`).
2. Page through \`GET /v1/companies?since=<last>&limit=200&offset=0\`, then \`offset=200\`, and so
   on, until \`offset >= total\`; the same for \`GET /v1/leads\`. \`since\` is inclusive and filters
   companies on \`lastSeen\` and leads on \`createdAt\`.
3. Only when every page succeeded, store \`last = started\`. Recording the time before reading
   means that what arrives during a long pagination is picked up by the next pass.

An item may be seen twice across passes (a company visited again mid-sync moves): upsert by \`id\`.
On a 429, wait \`Retry-After\` seconds and resume.

## Rate limit

120 requests per key per fixed one-minute window; a window starts with the key's first request in
it. Every authenticated request counts, whatever its status, and two keys of one workspace have
separate budgets. The limit holds across all instances of the service. Every response to an
authenticated request carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (whole seconds until the window resets); past the limit the answer is a 429
with \`Retry-After\` and \`X-RateLimit-Remaining: 0\`. Requests that fail authentication are
limited per client address (300 per minute), with the same 429.

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
violated constraint, each naming the parameter), 401, 429, 503 when the database is unreachable
or timing out (\`Service temporarily unavailable\`; retry later), 500 for any other failure
(\`Internal server error\`, with no internal detail), and 404 (\`NOT_FOUND\`) for an unknown path
or method.

## Headers of every response

\`Content-Type: application/json; charset=utf-8\`, \`Cache-Control: no-store\` (the data is
private to a workspace), and \`X-Request-Id\`: yours when you sent a sane one, otherwise a
generated one; the server logs it with the request.

## Versioning

The version is in the path prefix \`/v1\`; this document describes version \`1\`. No events or
webhooks are part of this version.
`.trim();

export const API_KEY_DESCRIPTION =
  'An API key of the workspace: `st_` + at least 32 base62 characters + a 6-character base62 ' +
  'CRC32 checksum, e.g. `st_4fJx...Qz81aB`. Created in the customer application (Administration, ' +
  'Tracking section) and shown only once.';
