import { DeliverySlots } from './delivery-slots';

describe('DeliverySlots', () => {
  it('gives one endpoint at most its share, and the rest of the capacity to the others', () => {
    const slots = new DeliverySlots(5, 2);
    slots.hold(5);
    expect(slots.tryStart('hanging')).not.toBe(false);
    expect(slots.tryStart('hanging')).not.toBe(false);
    expect(slots.tryStart('hanging')).toBe(false);
    expect(slots.tryStart('healthy')).not.toBe(false);
    slots.unhold(2);
    expect(slots.attempts).toBe(3);
    expect(slots.room).toBe(2);
  });

  it('frees the place of a finished attempt and says how old the oldest one is', async () => {
    let now = 1_000;
    const slots = new DeliverySlots(2, 2, () => now);
    slots.hold(2);
    const first = slots.tryStart('a') as number;
    now += 500;
    const second = slots.tryStart('a') as number;
    now += 500;
    expect(slots.oldestAttemptMs('a')).toBe(1_000);
    const freed = slots.freed();
    slots.finish('a', first);
    await freed;
    expect(slots.oldestAttemptMs('a')).toBe(500);
    slots.finish('a', second);
    expect(slots.oldestAttemptMs('a')).toBe(0);
    expect(slots.room).toBe(2);
  });
});
