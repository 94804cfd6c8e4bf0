import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ModuleKind, transpileModule } from 'typescript';

/*
 * What V8's collections promote out of the young generation, read from V8's own trace
 * (`--trace-gc-nvp`, one line per collection): how the specs check that what passes through a
 * structure of this project dies young.
 */

/** The bytes each collection of the trace promoted; `youngOnly`: the young collections' alone. */
export function promotedBytes(trace: string, { youngOnly = false } = {}): number[] {
  const line = youngOnly ? / gc=s .* promoted=(\d+)/g : / promoted=(\d+)/g;
  return [...trace.matchAll(line)].map((match) => Number(match[1]));
}

/**
 * A TypeScript module of this project compiled alone to CommonJS in a temporary folder, for a
 * process of its own to require: its path, and the removal of the folder.
 */
export function compiledAlone(typescriptFile: string): { path: string; remove: () => void } {
  const directory = mkdtempSync(join(tmpdir(), 'compiled-alone-'));
  const path = join(directory, basename(typescriptFile).replace(/\.ts$/, '.js'));
  const source = readFileSync(typescriptFile, 'utf8');
  writeFileSync(
    path,
    transpileModule(source, { compilerOptions: { module: ModuleKind.CommonJS } }).outputText,
  );
  return { path, remove: () => rmSync(directory, { recursive: true }) };
}

/** Runs `script` in a Node process of its own (this Node, `flags`, V8's trace): what it printed. */
export function tracedRun(script: string, flags: string[]): string {
  const run = spawnSync(process.execPath, [...flags, '--trace-gc-nvp', '-e', script], {
    encoding: 'utf8',
    // A line per collection: well over the default 1 MB when much is promoted.
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) {
    throw new Error(`The traced run failed (${run.status ?? run.signal}):\n${run.stderr}`);
  }
  return run.stdout;
}

export const megabytes = (bytes: number[]) => bytes.reduce((total, each) => total + each, 0) / 1e6;
