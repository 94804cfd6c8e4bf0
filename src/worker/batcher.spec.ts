import { Batcher } from './batcher';

describe('Batcher', () => {
  it('writes what arrives together in one call, and settles each add with its write', async () => {
    const writes: number[][] = [];
    const batcher = new Batcher<number>((items) => {
      writes.push(items);
      return items.includes(13) ? Promise.reject(new Error('unlucky')) : Promise.resolve();
    }, 3);
    await Promise.all([batcher.add(1), batcher.add(2)]);
    await Promise.all([batcher.add(3), batcher.add(4), batcher.add(5)]);
    await expect(batcher.add(13)).rejects.toThrow('unlucky');
    expect(writes).toEqual([[1, 2], [3, 4, 5], [13]]);
  });

  it('writes what waits when drained', async () => {
    const writes: string[][] = [];
    const batcher = new Batcher<string>((items) => {
      writes.push(items);
      return Promise.resolve();
    });
    const added = batcher.add('a');
    await batcher.drain();
    await added;
    expect(writes).toEqual([['a']]);
  });
});
