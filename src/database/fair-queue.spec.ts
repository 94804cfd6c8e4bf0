import { FairQueue, OverloadedError } from './fair-queue';

/** A statement the test ends when it likes. */
function statement() {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { done, end };
}

/** A queue on a clock the test moves, and a log of the order in which statements started. */
function setup(options: {
  seats: number;
  seatsPerFlow?: number;
  deadlineMs?: number;
  maxWaiting?: number;
}) {
  let now = 0;
  const queue = new FairQueue({
    seats: options.seats,
    seatsPerFlow: options.seatsPerFlow,
    deadlineMs: options.deadlineMs ?? 60_000,
    maxWaiting: options.maxWaiting ?? 1_000,
    initialServiceMs: 10,
    now: () => now,
  });
  const started: string[] = [];
  const pending = new Map<string, () => void>();
  // No expect() in the callbacks: a statement still queued when the file ends settles after
  // jest has torn its globals down.
  const outcomes = new Map<string, 'done' | 'shed' | 'failed'>();
  function submit(flow: string, name: string): Promise<void> {
    const { done, end } = statement();
    pending.set(name, end);
    return queue
      .run(flow, () => {
        started.push(name);
        return done;
      })
      .then(
        () => void outcomes.set(name, 'done'),
        (error: unknown) =>
          void outcomes.set(name, error instanceof OverloadedError ? 'shed' : 'failed'),
      );
  }
  /** Ends a running statement after `ms` on the clock, and lets the queue hand its seat on. */
  async function finish(name: string, ms = 10): Promise<void> {
    now += ms;
    pending.get(name)!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { queue, started, outcomes, submit, finish, tick: (ms: number) => (now += ms) };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('FairQueue', () => {
  it("serves a flow with one statement waiting before another flow's backlog", async () => {
    const { started, submit, finish } = setup({ seats: 2 });
    for (let i = 0; i < 20; i++) void submit('noisy', `noisy-${i}`);
    void submit('quiet', 'quiet-0');
    await flush();
    expect(started).toEqual(['noisy-0', 'noisy-1']);
    await finish('noisy-0');
    // The next seat goes to the flow served least: the quiet one, not noisy-2 (one FIFO would).
    expect(started).toEqual(['noisy-0', 'noisy-1', 'quiet-0']);
  });

  it('alternates between flows with backlogs, whatever the order they came in', async () => {
    const { started, submit, finish } = setup({ seats: 1 });
    for (let i = 0; i < 4; i++) void submit('a', `a-${i}`);
    for (let i = 0; i < 4; i++) void submit('b', `b-${i}`);
    await flush();
    for (let i = 0; i < 7; i++) await finish(started.at(-1)!);
    expect(started.map((name) => name[0]).join('')).toBe('abababab');
  });

  it('charges measured time: a flow of slow statements gets fewer turns than one of fast ones', async () => {
    const { started, submit, finish } = setup({ seats: 1 });
    for (let i = 0; i < 10; i++) void submit('slow', `slow-${i}`);
    for (let i = 0; i < 10; i++) void submit('fast', `fast-${i}`);
    await flush();
    for (let turn = 0; turn < 12; turn++) {
      const running = started.at(-1)!;
      await finish(running, running.startsWith('slow') ? 50 : 5);
    }
    const slow = started.filter((name) => name.startsWith('slow')).length;
    const fast = started.filter((name) => name.startsWith('fast')).length;
    expect(fast).toBeGreaterThan(2 * slow);
  });

  it('sheds at once when the backlog would not drain in time, the heaviest flow first', async () => {
    // 1 seat, 10 ms a statement, a 100 ms deadline: at most 10 may wait.
    const { queue, outcomes, submit } = setup({ seats: 1, deadlineMs: 100 });
    for (let i = 0; i < 11; i++) void submit('noisy', `noisy-${i}`);
    await flush();
    expect(queue.waiting).toBe(10);
    // The 11th and 12th statements of the noisy flow: its own newest are refused, at once.
    void submit('noisy', 'noisy-11');
    await flush();
    expect(outcomes.get('noisy-11')).toBe('shed');
    // A quiet flow's statement is admitted; the noisy flow's newest waiter makes room for it.
    void submit('quiet', 'quiet-0');
    await flush();
    expect(outcomes.get('quiet-0')).toBeUndefined();
    expect(outcomes.get('noisy-10')).toBe('shed');
    expect(queue.waiting).toBe(10);
  });

  it("prices each flow's backlog at its own measured cost, not at the average statement", async () => {
    // The service's shape: 10 seats, 3 per flow, a 5 s deadline. Nineteen light workspaces were
    // served a page each (10 ms), then a heavy one 20 pages in a row (300 ms): the average statement
    // is now about 200 ms, while a light workspace's is still 10 ms.
    const { outcomes, submit, finish } = setup({ seats: 10, seatsPerFlow: 3, deadlineMs: 5_000 });
    const light = Array.from({ length: 19 }, (_, i) => `light-${i}`);
    for (const flow of light) {
      const done = submit(flow, `${flow}-warm`);
      await finish(`${flow}-warm`, 10);
      await done;
    }
    for (let i = 0; i < 20; i++) {
      const done = submit('heavy', `heavy-warm-${i}`);
      await finish(`heavy-warm-${i}`, 300);
      await done;
    }
    // All twenty at their in-flight limit at once: the heavy one's 20 pages (3 run, 17 wait: 1.7 s
    // through its 3 seats) and 19 x 17 light pages behind 7 running (3.2 s of statements over 10
    // seats). Everything drains in under a second; priced at the average, 6.8 s, past the deadline.
    for (let i = 0; i < 20; i++) void submit('heavy', `heavy-${i}`);
    for (const flow of light) for (let i = 0; i < 17; i++) void submit(flow, `${flow}-${i}`);
    await flush();
    expect([...outcomes.values()].filter((outcome) => outcome === 'shed')).toEqual([]);
  });

  it("weighs a flow's first statements as much as the next ones, not twenty times as much", async () => {
    // A cold process: its first statement took 500 ms, the next nine 10 ms each. Their mean, 59 ms,
    // prices the flow: 15 waiting through 1 seat drain in 0.9 s, inside the deadline. Weighed from
    // the first one alone, the estimate would still be 319 ms (4.8 s).
    const { outcomes, submit, finish } = setup({ seats: 1, deadlineMs: 1_000 });
    for (let i = 0; i < 10; i++) {
      const done = submit('cold', `warm-${i}`);
      await finish(`warm-${i}`, i === 0 ? 500 : 10);
      await done;
    }
    for (let i = 0; i < 16; i++) void submit('cold', `cold-${i}`);
    await flush();
    expect([...outcomes.values()].filter((outcome) => outcome === 'shed')).toEqual([]);
  });

  it("sheds a flow whose own backlog would not drain through its share, and that flow's only", async () => {
    const { queue, outcomes, submit, finish } = setup({
      seats: 10,
      seatsPerFlow: 2,
      deadlineMs: 1_000,
    });
    const warm = submit('slow', 'slow-warm');
    await finish('slow-warm', 200);
    await warm;
    // 200 ms a statement through 2 seats: 10 may wait; 20 statements leave 18 waiting.
    for (let i = 0; i < 20; i++) void submit('slow', `slow-${i}`);
    for (let i = 0; i < 8; i++) void submit('other', `other-${i}`);
    await flush();
    const shed = [...outcomes].filter(([, outcome]) => outcome === 'shed').map(([name]) => name);
    // Each newcomer past the 10 is its own flow's newest, refused as it comes; the other flow's 8
    // (2 running, 6 waiting, not measured yet) wait their turn, though seats stay free.
    expect(shed).toEqual(Array.from({ length: 8 }, (_, i) => `slow-${12 + i}`));
    expect(queue.waiting).toBe(10 + 6);
  });

  it('sheds more once statements run longer than the estimate (a database that stalls)', async () => {
    const { queue, outcomes, submit, tick } = setup({ seats: 1, deadlineMs: 100 });
    void submit('a', 'a-0');
    for (let i = 1; i < 6; i++) void submit('a', `a-${i}`);
    await flush();
    expect(queue.waiting).toBe(5);
    // The running statement has been running 60 ms: 5 waiting take 300 ms, past the deadline.
    tick(60);
    void submit('b', 'b-0');
    await flush();
    expect([...outcomes.values()].filter((outcome) => outcome === 'shed').length).toBe(5);
    expect(queue.waiting).toBe(1);
  });

  it('refuses a statement that waited the whole deadline', async () => {
    jest.useFakeTimers();
    try {
      const queue = new FairQueue({ seats: 1, deadlineMs: 1_000, maxWaiting: 10 });
      const blocker = statement();
      const running = queue.run('a', () => blocker.done);
      const waiting = queue.run('b', () => Promise.resolve('never'));
      jest.advanceTimersByTime(1_000);
      await expect(waiting).rejects.toBeInstanceOf(OverloadedError);
      expect(queue.waiting).toBe(0);
      blocker.end();
      await running;
      expect(queue.busy).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('keeps at most maxWaiting, and frees every seat when statements fail', async () => {
    const { queue, outcomes, submit } = setup({ seats: 1, maxWaiting: 3 });
    for (let i = 0; i < 6; i++) void submit(`flow-${i % 3}`, `s-${i}`);
    await flush();
    expect(queue.waiting).toBe(3);
    expect([...outcomes.values()]).toEqual(['shed', 'shed']);
    const failing = new FairQueue({ seats: 1, deadlineMs: 1_000, maxWaiting: 3 });
    await expect(failing.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(failing.busy).toBe(0);
    await expect(failing.run('a', () => Promise.resolve(1))).resolves.toBe(1);
  });
});

describe('FairQueue.othersAskedWithin', () => {
  it('tells a flow whether another flow asked for a seat lately, never counting its own asks', async () => {
    const { queue, submit, finish, tick } = setup({ seats: 2 });
    expect(queue.othersAskedWithin('stream', 1_000)).toBe(false);
    void submit('stream', 'stream-0');
    await flush();
    expect(queue.othersAskedWithin('stream', 1_000)).toBe(false);
    void submit('quiet', 'quiet-0');
    await flush();
    expect(queue.othersAskedWithin('stream', 1_000)).toBe(true);
    expect(queue.othersAskedWithin('quiet', 1_000)).toBe(true);
    await finish('quiet-0', 500);
    expect(queue.othersAskedWithin('stream', 1_000)).toBe(true);
    tick(501);
    // The quiet flow asked 1,001 ms ago: the stream may take its seats again.
    expect(queue.othersAskedWithin('stream', 1_000)).toBe(false);
    expect(queue.othersAskedWithin('stream', 5_000)).toBe(true);
    await finish('stream-0');
  });
});

describe('FairQueue with a share per flow', () => {
  it('keeps seats free for other flows beyond one flow share, and gives them at once', async () => {
    const queue = new FairQueue({ seats: 4, seatsPerFlow: 2, deadlineMs: 60_000, maxWaiting: 100 });
    const started: string[] = [];
    const ends = new Map<string, () => void>();
    const submit = (flow: string, name: string) =>
      queue.run(flow, () => {
        started.push(name);
        return new Promise<void>((resolve) => ends.set(name, resolve));
      });
    const all = [0, 1, 2, 3, 4].map((i) => submit('noisy', `noisy-${i}`));
    await flush();
    expect(started).toEqual(['noisy-0', 'noisy-1']);
    expect(queue.busy).toBe(2);
    all.push(submit('quiet', 'quiet-0'));
    await flush();
    // A seat was free: the quiet flow's statement did not wait at all.
    expect(started).toEqual(['noisy-0', 'noisy-1', 'quiet-0']);
    ends.get('noisy-0')!();
    await flush();
    expect(started).toEqual(['noisy-0', 'noisy-1', 'quiet-0', 'noisy-2']);
    for (const name of ['noisy-1', 'noisy-2', 'quiet-0']) ends.get(name)!();
    await flush();
    await flush();
    for (const name of ['noisy-3', 'noisy-4']) ends.get(name)!();
    await Promise.all(all);
    expect(queue.busy).toBe(0);
  });
});
