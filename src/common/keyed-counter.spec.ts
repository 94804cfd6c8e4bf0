import { KeyedCounter } from './keyed-counter';

it('counts per key and in total, each release once however often called', () => {
  const counter = new KeyedCounter();
  const first = counter.acquire('a');
  const second = counter.acquire('a');
  counter.acquire('b');
  expect([counter.of('a'), counter.of('b'), counter.total]).toEqual([2, 1, 3]);
  first();
  first();
  expect([counter.of('a'), counter.total]).toEqual([1, 2]);
  second();
  expect([counter.of('a'), counter.total]).toEqual([0, 1]);
});

it('forgets a key once it holds nothing', () => {
  const counter = new KeyedCounter();
  counter.acquire('a')();
  expect((counter as unknown as { byKey: Map<string, number> }).byKey.size).toBe(0);
});
