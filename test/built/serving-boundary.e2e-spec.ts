import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/*
 * The server never loads Prisma: the module graph of the built AppModule (what `node dist/main.js`
 * requires) holds no Prisma client or adapter, only the generated enumerations. ESLint's rule in
 * eslint.config.mjs names a direct import; this catches one through any other module. The admin
 * tool's graph is the control: it does load Prisma, so the check can tell.
 */
const DIST = join(__dirname, '../..', 'dist');

function modulesLoadedBy(file: string): string[] {
  const script = `require(${JSON.stringify(join(DIST, file))});
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const output = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  return JSON.parse(output) as string[];
}

const PRISMA = /[\\/](@prisma[\\/](client|adapter-pg)|generated[\\/]prisma[\\/](client|internal))/;

describe('the serving boundary', () => {
  it('the server module graph loads no Prisma client', () => {
    const loaded = modulesLoadedBy('app.module.js');
    expect(loaded.some((path) => path.includes(join('dist', 'companies')))).toBe(true);
    expect(loaded.filter((path) => PRISMA.test(path))).toEqual([]);
  });

  it('the admin tool does (the check can tell)', () => {
    expect(modulesLoadedBy(join('cli', 'cli.module.js')).some((path) => PRISMA.test(path))).toBe(
      true,
    );
  });
});
