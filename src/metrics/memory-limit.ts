import { readFileSync } from 'node:fs';

// cgroup v2, then v1: where a container's memory limit is read from inside it.
const LIMIT_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'];
// cgroup v1 writes "no limit" as the largest page-aligned 63-bit number (9223372036854771712).
const NO_LIMIT_FROM = 2 ** 62;

/**
 * The memory limit of the container (cgroup) this process runs in, in bytes; undefined when there
 * is none (v2 writes "max") or it cannot be read (not Linux, or no cgroup mounted).
 */
export function containerMemoryLimit(files: string[] = LIMIT_FILES): number | undefined {
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      continue;
    }
    const bytes = Number(text);
    return Number.isSafeInteger(bytes) && bytes > 0 && bytes < NO_LIMIT_FROM ? bytes : undefined;
  }
  return undefined;
}
