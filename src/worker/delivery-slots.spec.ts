import { DeliverySlots, SLOW_ATTEMPT_MS } from './delivery-slots';

describe('DeliverySlots', () => {
  it('gives an endpoint its share at once, keeps its next jobs for its next turns', () => {
    let now = 0;
    const slots = new DeliverySlots<string>(10, 2, () => now);
    slots.hold(5);
    expect(['a1', 'a2', 'a3', 'a4'].map((job) => slots.admit('a', job))).toEqual([
      { startedAt: 0 },
      { startedAt: 0 },
      'wait',
      'wait',
    ]);
    expect(slots.admit('b', 'b1')).toEqual({ startedAt: 0 });
    // a1's exchange ends: a3 starts in its place, then a4.
    now += 10;
    expect(slots.attemptEnded('a', 0)).toEqual({ job: 'a3', startedAt: 10 });
    expect(slots.attemptEnded('a', 0)).toEqual({ job: 'a4', startedAt: 10 });
    expect(slots.attemptEnded('a', 10)).toBeUndefined();
    expect(slots.room).toBe(5);
    slots.release(5);
    expect(slots.room).toBe(10);
  });

  it("sends a slow endpoint's jobs back, those that waited included, and says how slow", () => {
    let now = 0;
    const slots = new DeliverySlots<string>(100, 2, () => now);
    slots.admit('hanging', 'h1');
    slots.admit('hanging', 'h2');
    expect(slots.admit('hanging', 'h3')).toBe('wait');
    expect(slots.takeWaitingOfSlowEndpoints()).toEqual([]);
    now += SLOW_ATTEMPT_MS;
    expect(slots.admit('hanging', 'h4')).toBe('defer');
    expect(slots.takeWaitingOfSlowEndpoints()).toEqual([{ endpointId: 'hanging', jobs: ['h3'] }]);
    expect(slots.oldestAttemptMs('hanging')).toBe(SLOW_ATTEMPT_MS);
    // Another endpoint is not held up by it.
    expect(slots.admit('healthy', 'ok1')).toEqual({ startedAt: SLOW_ATTEMPT_MS });
  });

  it('when the worker stops: no next job is started, and every waiting job can be taken back', () => {
    const slots = new DeliverySlots<string>(10, 1, () => 0);
    slots.admit('a', 'a1');
    slots.admit('a', 'a2');
    slots.admit('b', 'b1');
    slots.admit('b', 'b2');
    expect(slots.attemptEnded('a', 0, false)).toBeUndefined();
    expect(slots.takeWaitingOfSlowEndpoints()).toEqual([]);
    expect(slots.takeWaitingOfSlowEndpoints(true)).toEqual([
      { endpointId: 'a', jobs: ['a2'] },
      { endpointId: 'b', jobs: ['b2'] },
    ]);
  });

  it('wakes whoever waits for a place', async () => {
    const slots = new DeliverySlots<string>(1, 1);
    slots.hold(1);
    expect(slots.room).toBe(0);
    const freed = slots.freed();
    slots.release();
    await freed;
    expect(slots.room).toBe(1);
  });
});
