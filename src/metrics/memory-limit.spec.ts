import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerMemoryLimit } from './memory-limit';

describe('containerMemoryLimit', () => {
  const directory = mkdtempSync(join(tmpdir(), 'memory-limit-'));
  const file = (name: string, text: string) => {
    const path = join(directory, name);
    writeFileSync(path, text);
    return path;
  };

  it.each([
    ['a cgroup v2 limit', '268435456\n', 268435456],
    ['cgroup v2 without a limit', 'max\n', undefined],
    ["cgroup v1's no limit", '9223372036854771712\n', undefined],
    ['something else', 'garbage', undefined],
  ])('reads %s', (_, text, expected) => {
    expect(containerMemoryLimit([file('limit', text)])).toBe(expected);
  });

  it('takes the first file that exists, and is undefined when none does', () => {
    const v1 = file('v1', '536870912');
    expect(containerMemoryLimit([join(directory, 'absent'), v1])).toBe(536870912);
    expect(containerMemoryLimit([join(directory, 'absent')])).toBeUndefined();
  });
});
