import { smallWorkspaceId } from './data';
import { measureLevels } from './compression';
import type { CompressionLevels } from './compression';
import { type ServerName, log, smoke } from './run-settings';
import type { Workload } from './workload';
import { type RunningServer, SERVERS } from './servers';

/*
 * Sample answers of each server, compared; one page's compression levels.
 */

export async function levelsOnAPage(
  servers: Map<ServerName, RunningServer>,
  keys: Map<string, string>,
): Promise<CompressionLevels> {
  const response = await fetch(
    `http://127.0.0.1:${servers.get('service')?.port}/v1/companies?limit=200`,
    { headers: { authorization: `Bearer ${keys.get(smallWorkspaceId(1))}` } },
  );
  const levels = measureLevels(Buffer.from(await response.arrayBuffer()), smoke ? 3 : 200);
  const chosen = levels.rows.filter((row) => row.chosen);
  log(
    `compression of a ${levels.bytes}-byte page: ` +
      chosen.map((row) => `${row.coding} ${row.bytes} bytes, ${row.ms.toFixed(2)} ms`).join('; '),
  );
  return levels;
}

/**
 * The first requests of each workload, as each server answers them (null where the server is not
 * measured on the workload): compared after the runs.
 */
export async function fetchSamples(
  { name, port }: RunningServer,
  workloads: Workload[],
): Promise<(string | null)[]> {
  const bodies: (string | null)[] = [];
  for (const { requests, servers } of workloads) {
    // The API's answers; health probes are not the same program on both sides.
    for (const { path, key } of requests.filter((r) => r.path.startsWith('/v1/')).slice(0, 3)) {
      if (!(servers ?? SERVERS).includes(name)) {
        bodies.push(null);
        continue;
      }
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const body = await response.text();
      // A feed read without a cursor may start the client's pass at the database's current
      // transaction horizon, which its nextCursor carries and which moves between two reads.
      const firstRead = path.includes('/changes?') && !path.includes('cursor=');
      const comparable = firstRead
        ? body.replace(/"nextCursor":"[^"]*"/, '"nextCursor":"(a first read\'s)"')
        : body;
      bodies.push(`${response.status} ${comparable}`);
    }
  }
  return bodies;
}

/**
 * The bare server must write the service's bytes exactly; the naive one the same JSON values
 * (its own serializer writes numbers its way). A difference is a bug in one of them.
 */
export function checkSameAnswers(samples: Map<ServerName, (string | null)[]>): void {
  const service = samples.get('service') ?? [];
  const parse = (sample: string) => JSON.parse(sample.slice(4)) as unknown;
  service.forEach((sample, i) => {
    if (sample === null) return;
    const bare = samples.get('bare')?.[i];
    if (bare !== null && bare !== sample) {
      throw new Error(
        `the bare server's answer differs from the service's: ${sample.slice(0, 200)}`,
      );
    }
    const naive = samples.get('naive')?.[i];
    if (naive !== null && JSON.stringify(parse(naive ?? '')) !== JSON.stringify(parse(sample))) {
      throw new Error(
        `the naive server's answer differs from the service's: ${sample.slice(0, 200)}`,
      );
    }
  });
  const compared = service.filter((sample) => sample !== null).length;
  log(`${compared} sample answers: bare identical byte for byte, naive equal as JSON`);
}
