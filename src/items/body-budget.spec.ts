import {
  BodyBudget,
  HEAP_BYTES_PER_BODY_BYTE,
  INLINE_BODY_BYTES,
  LARGE_BODIES_HEAP_BYTES,
  LARGE_BODY_WAIT_MS,
  MAX_LARGE_BODIES_WAITING,
} from './body-budget';

/*
 * The heap budget of large bodies (body-budget.ts), with statements simulated: a "database" whose
 * bodies have given sizes, that records the reads it is asked for and how many large bodies are
 * in memory at once (from a read that returns one until the response has it, the next turn of the
 * event loop).
 */

const MB = 1024 * 1024;

interface Row {
  body: string | null;
  bytes: number;
}

/** The large bodies in memory at once, across databases. */
class Memory {
  bodies: number[] = [];
  mostHeap = 0;
  /** Every set of bodies that was in memory together, by size. */
  together: number[][] = [];
}

class FakeDatabase {
  reads: (number | null)[] = [];
  inMemory = 0;
  mostInMemory = 0;
  heapInMemory = 0;
  mostHeapInMemory = 0;
  uncapped = 0;
  mostUncapped = 0;

  constructor(
    private readonly bytes: number,
    private readonly memory = new Memory(),
  ) {}

  /** One sized read: the body if it fits the cap, after a delay (the statement's time). */
  async read(cap: number | null): Promise<Row> {
    this.reads.push(cap);
    // A read with no cap runs once the budget has granted its room: counted from its start,
    // since two statements' timers may end in different turns of a loaded event loop.
    if (cap === null) this.mostUncapped = Math.max(this.mostUncapped, ++this.uncapped);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (cap !== null && this.bytes > cap) return { body: null, bytes: this.bytes };
    if (this.bytes > INLINE_BODY_BYTES) {
      const heap = this.bytes * HEAP_BYTES_PER_BODY_BYTE;
      this.inMemory++;
      this.heapInMemory += heap;
      this.mostInMemory = Math.max(this.mostInMemory, this.inMemory);
      this.mostHeapInMemory = Math.max(this.mostHeapInMemory, this.heapInMemory);
      this.memory.bodies.push(this.bytes);
      this.memory.together.push([...this.memory.bodies]);
      // Handed to the response in the caller's continuations: gone at the next turn.
      setImmediate(() => {
        if (cap === null) this.uncapped--;
        this.inMemory--;
        this.heapInMemory -= heap;
        this.memory.bodies.splice(this.memory.bodies.indexOf(this.bytes), 1);
      });
    }
    return { body: 'x', bytes: this.bytes };
  }
}

function readThrough(budget: BodyBudget, database: FakeDatabase, key = 'companies:ws_1') {
  return budget.read(
    key,
    (cap) => database.read(cap),
    (row) => row.body,
  );
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('BodyBudget', () => {
  it('returns a body of ordinary size from the first read, capped, reserving nothing', async () => {
    const budget = new BodyBudget();
    const database = new FakeDatabase(200_000);

    await expect(readThrough(budget, database)).resolves.toEqual({ body: 'x', bytes: 200_000 });
    expect(database.reads).toEqual([INLINE_BODY_BYTES]);
    expect(budget.heldBytes).toBe(0);
  });

  it('reads a large body again with its heap reserved, and gives the room back once handed on', async () => {
    const budget = new BodyBudget();
    const database = new FakeDatabase(15 * MB);

    const row = await readThrough(budget, database);

    expect(row).toEqual({ body: 'x', bytes: 15 * MB });
    expect(database.reads).toEqual([INLINE_BODY_BYTES, null]);
    expect(budget.heldBytes).toBe(30 * MB);
    await nextTurn();
    expect(budget.heldBytes).toBe(0);
  });

  it('never holds more large bodies than the budget, however many read at once', async () => {
    const budget = new BodyBudget();
    const database = new FakeDatabase(15 * MB);

    const rows = await Promise.all(Array.from({ length: 24 }, () => readThrough(budget, database)));

    expect(rows.every((row) => row?.body === 'x')).toBe(true);
    // 30 MB of heap each: two fit in 64 MiB, never three.
    expect(database.mostUncapped).toBe(2);
    expect(database.mostInMemory).toBeLessThanOrEqual(2);
    expect(database.mostHeapInMemory).toBeLessThanOrEqual(LARGE_BODIES_HEAP_BYTES);
  });

  it('reads a body larger than the whole budget alone', async () => {
    const budget = new BodyBudget();
    const memory = new Memory();
    const huge = new FakeDatabase(40 * MB, memory);
    const large = new FakeDatabase(5 * MB, memory);

    await Promise.all([
      readThrough(budget, huge, 'a'),
      readThrough(budget, large, 'b'),
      readThrough(budget, huge, 'c'),
      readThrough(budget, large, 'd'),
    ]);

    // 80 MB of heap, over the budget: never with another body.
    for (const bodies of memory.together) {
      if (bodies.includes(40 * MB)) expect(bodies).toEqual([40 * MB]);
    }
    expect(memory.together).toHaveLength(4);
  });

  it('remembers a key whose body was large: the next read reserves first and reads once', async () => {
    const budget = new BodyBudget();
    const database = new FakeDatabase(15 * MB);

    await readThrough(budget, database);
    await nextTurn();
    database.reads = [];
    await readThrough(budget, database);

    // Room for its size and a tenth more: a page a little larger is still read once.
    expect(database.reads).toEqual([16.5 * MB]);
    const larger = new FakeDatabase(16 * MB);
    await readThrough(budget, larger);
    expect(larger.reads).toEqual([16.5 * MB]);
    // Grown more than that: the capped read finds it over, and it is read again with more room.
    await nextTurn();
    const grown = new FakeDatabase(40 * MB);
    await readThrough(budget, grown);
    expect(grown.reads).toEqual([Math.ceil(16 * MB * 1.1), null]);
    // Small again: forgotten.
    await nextTurn();
    const small = new FakeDatabase(1_000);
    await readThrough(budget, small);
    await readThrough(budget, small);
    expect(small.reads).toEqual([Math.ceil(40 * MB * 1.1), INLINE_BODY_BYTES]);
  });

  it(`sheds a large body when ${MAX_LARGE_BODIES_WAITING} already wait, and one that waits over ${LARGE_BODY_WAIT_MS} ms`, async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const budget = new BodyBudget();
      const huge = new FakeDatabase(40 * MB);
      // One large body admitted whose read never ends: it holds the whole budget.
      const never = new Promise<Row>(() => undefined);
      void budget.read(
        'blocker',
        (cap) => (cap === null ? never : Promise.resolve({ body: null, bytes: 40 * MB })),
        (row) => row.body,
      );
      await jest.advanceTimersByTimeAsync(0);
      expect(budget.heldBytes).toBe(LARGE_BODIES_HEAP_BYTES);

      const waiting = Array.from({ length: MAX_LARGE_BODIES_WAITING }, (_, i) =>
        budget.read(
          `w${i}`,
          (cap) => huge.read(cap),
          (row) => row.body,
        ),
      );
      const outcomes = Promise.allSettled(waiting);
      // Each one's capped read finds its body large, then waits for room.
      await jest.advanceTimersByTimeAsync(10);
      const refused = budget
        .read(
          'late',
          (cap) => huge.read(cap),
          (row) => row.body,
        )
        .catch((error: unknown) => error);
      await jest.advanceTimersByTimeAsync(10);
      await expect(refused).resolves.toMatchObject({
        code: 'POOL_SATURATED',
        message: `large response bodies saturated: ${MAX_LARGE_BODIES_WAITING} large bodies already wait`,
      });

      await jest.advanceTimersByTimeAsync(LARGE_BODY_WAIT_MS);
      const settled = await outcomes;
      expect(settled.every((outcome) => outcome.status === 'rejected')).toBe(true);
      expect((settled[0] as PromiseRejectedResult).reason).toMatchObject({
        code: 'POOL_SATURATED',
        message: `large response bodies saturated: no room within ${LARGE_BODY_WAIT_MS} ms`,
      });
    } finally {
      jest.useRealTimers();
    }
  });
});
