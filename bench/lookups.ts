import { LARGE_WORKSPACE_ID } from './data';
import { withClient } from './with-client';

/*
 * The companies list's lookups on the large workspace (docs/api.md, "Lookups"): `domain=` (l) and
 * `q=` (l1), with values taken from its data.
 */

export interface LookupValues {
  /** Domains of the large workspace's companies, as stored. */
  domains: string[];
  /** Companies' names and domains, one per length of `q` (3 to 10 characters). */
  texts: string[];
}

const Q_LENGTHS = [3, 4, 5, 6, 7, 8, 9, 10];

// Texts no company of the generated data has (its names and domains are made of other words).
const ABSENT = ['qzx', 'acme', 'zyxel', 'initec', 'umbrela', 'wayne co', 'hooli xyz', 'contoso ab'];

/** A sample of the large workspace's companies, in id order (ids are hashes: any order). */
export async function lookupValues(url: string): Promise<LookupValues> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ name: string; domain: string }>(
      'SELECT name, domain FROM companies WHERE workspace_id = $1 ORDER BY id LIMIT 200',
      [LARGE_WORKSPACE_ID],
    );
    return {
      domains: rows.map((row) => row.domain),
      texts: rows.slice(0, Q_LENGTHS.length).map((row, i) => (i % 2 ? row.domain : row.name)),
    };
  });
}

/**
 * (l)'s domains, one per request: as stored or as people write them (upper case, `www.`, a
 * trailing dot), a quarter of none.
 */
export function lookupDomains(values: LookupValues): string[] {
  const written = (domain: string, i: number) =>
    [domain, `www.${domain}`, `${domain.toUpperCase()}.`, `nowhere-${i}.example`][i % 4];
  return values.domains.map(written);
}

/**
 * (l1)'s texts: for each length of 3 to 10 characters, the start of a name or a domain (matching
 * from a few thousand companies to a tenth of them) and a text of the same length that none has.
 */
export function lookupTexts(values: LookupValues): string[] {
  return Q_LENGTHS.flatMap((length, i) => [
    values.texts[i].slice(0, length),
    ABSENT[i].slice(0, length),
  ]);
}
