import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderQueries, SERVING_QUERIES } from './serving-queries';

/** `npm run queries`: writes src/queries/<file>.sql for every group of serving statements. */
for (const file of Object.keys(SERVING_QUERIES)) {
  const path = join(__dirname, '..', '..', 'src', 'queries', `${file}.sql`);
  writeFileSync(path, renderQueries(file));
  console.log(`Wrote ${path}`);
}
