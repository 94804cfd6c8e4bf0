import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderQueries, SERVING_QUERIES } from './serving-queries';

// The committed SQL is the SQL the code runs: run `npm run queries` after changing a statement.
describe('the committed serving queries', () => {
  it.each(Object.keys(SERVING_QUERIES))('src/queries/%s.sql is what the code renders', (file) => {
    const committed = readFileSync(join(__dirname, `${file}.sql`), 'utf8');
    expect(committed).toBe(renderQueries(file));
  });
});
