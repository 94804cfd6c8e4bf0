import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { preProcessFile } from 'typescript';

/*
 * Every import runs downhill. The rooms are the folders of src/ (each file directly in src/ is a
 * room of its own: main.ts, app.module.ts, ...); one room importing another is an arrow, and no
 * arrows may go round in a circle, at the rooms' scale nor the files'. Then the rooms can be laid
 * out in floors with every import pointing down, and a module can be read, tested and moved with
 * what is below it only. Imports are read as TypeScript reads them (static, `export ... from`,
 * `import()`, type-only ones too: a type is a dependency of the reader); specs are leaves, left out.
 * The benchmark (bench/) is read too, as one room above the service's: its files may not go round
 * in a circle either, and nothing of src/ imports it.
 */
const SRC = __dirname;
const ROOT = join(SRC, '..');
const BENCH = join(ROOT, 'bench');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

const files = [...sourceFiles(SRC), ...sourceFiles(BENCH)];
const known = new Set(files);

/** The project's files each file imports (packages and generated code left out). */
const imports = new Map(
  files.map((file) => {
    const { importedFiles } = preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name.replace(/\.js$/, '')))
      .flatMap((base) => [`${base}.ts`, join(base, 'index.ts')].filter((path) => known.has(path)));
    return [file, [...new Set(targets)]];
  }),
);

const roomOf = (file: string) =>
  file.startsWith(BENCH + sep) ? 'bench' : relative(SRC, file).split(sep)[0];
/** A file as the failure messages name it: from the project's root. */
const nameOf = (file: string) => relative(ROOT, file);

/** The circles of a graph: its strongly connected components of more than one node (Tarjan). */
function circles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The shortest way round a circle, from its first member back to it (breadth first). */
function shortestLoop(graph: Map<string, Set<string>>, members: string[]): string[] {
  const start = members[0];
  const inside = new Set(members);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const next of graph.get(queue[i]) ?? []) {
      if (!inside.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, queue[i]);
      if (next === start) {
        const path: string[] = [];
        for (let at = queue[i]; at !== start; at = cameFrom.get(at)!) path.unshift(at);
        return [start, ...path];
      }
      queue.push(next);
    }
  }
  return members;
}

/**
 * Each circle as the imports along its shortest loop, `from -> to`, for the failure message: the
 * imports to look at, not every arrow inside a large circle.
 */
function describe(
  graph: Map<string, Set<string>>,
  found: string[][],
  arrow: (from: string, to: string) => string[],
): string[] {
  return found.map((members) => {
    const loop = shortestLoop(graph, members);
    return loop.flatMap((from, i) => arrow(from, loop[(i + 1) % loop.length])).join('; ');
  });
}

it('finds the imports it checks (the check can tell)', () => {
  expect(files.length).toBeGreaterThan(100);
  expect(imports.get(join(SRC, 'main.ts'))).toEqual([
    join(SRC, 'tracing', 'tracing.ts'),
    join(SRC, 'server', 'serve.ts'),
  ]);
  // A dynamic import counts: the container's entry point loads the server with one.
  expect(imports.get(join(SRC, 'server', 'entrypoint.ts'))).toContain(
    join(SRC, 'server', 'serve.ts'),
  );
  // The benchmark's files, and their imports of the service's.
  expect(imports.get(join(BENCH, 'run.ts'))).toContain(join(BENCH, 'report.ts'));
  expect(imports.get(join(BENCH, 'bare-handler.ts'))).toContain(
    join(SRC, 'changes', 'change-feed.ts'),
  );
  expect(
    circles(
      new Map([
        ['a', new Set(['b'])],
        ['b', new Set(['a'])],
        ['c', new Set()],
      ]),
    ),
  ).toEqual([['a', 'b']]);
});

it('has no circle of rooms: every import between folders runs downhill', () => {
  const rooms = new Map<string, Set<string>>();
  for (const [file, targets] of imports) {
    const from = roomOf(file);
    if (!rooms.has(from)) rooms.set(from, new Set());
    for (const target of targets) if (roomOf(target) !== from) rooms.get(from)!.add(roomOf(target));
  }
  const arrow = (from: string, to: string) =>
    [...imports]
      .filter(([file]) => roomOf(file) === from)
      .flatMap(([file, targets]) =>
        targets
          .filter((target) => roomOf(target) === to)
          .map((target) => `${nameOf(file)} -> ${nameOf(target)}`),
      );
  expect(describe(rooms, circles(rooms), arrow)).toEqual([]);
});

it('has no circle of files', () => {
  const graph = new Map([...imports].map(([file, targets]) => [file, new Set(targets)]));
  const arrow = (from: string, to: string) =>
    imports.get(from)!.includes(to) ? [`${nameOf(from)} -> ${nameOf(to)}`] : [];
  expect(describe(graph, circles(graph), arrow)).toEqual([]);
});

/** The imports into `room` from the service's files outside it. */
const intoRoom = (room: string) =>
  [...imports]
    .filter(([file]) => roomOf(file) !== room && roomOf(file) !== 'bench')
    .flatMap(([file, targets]) =>
      targets
        .filter((target) => roomOf(target) === room)
        .map((target) => `${nameOf(file)} -> ${nameOf(target)}`),
    );

it('has nothing of the service import the quick start (src/dev/, left out of the image)', () => {
  expect(intoRoom('dev')).toEqual([]);
});

it('has nothing of the service import the benchmark (bench/)', () => {
  expect(intoRoom('bench')).toEqual([]);
});
