/**
 * A page read by cursor (a change feed's, a visit list's), `{"data":...,"nextCursor":...,
 * "hasMore":...}`, as one flat string. Written as a template literal it would be a rope over
 * `data`, which Express flattens into a copy before encoding it: twice the heap of a large page
 * for a moment. Assembled as bytes outside the heap instead, `data` taken from the row first (and
 * dropped from it), so that only the final string is on the heap (body-budget.ts counts one).
 */
export function cursorPage(
  row: { data: string | null },
  nextCursor: string | null,
  hasMore: boolean,
): string {
  const data = Buffer.from(row.data as string, 'utf8');
  row.data = null;
  return Buffer.concat([
    Buffer.from('{"data":'),
    data,
    Buffer.from(`,"nextCursor":${JSON.stringify(nextCursor)},"hasMore":${hasMore}}`),
  ]).toString('utf8');
}
