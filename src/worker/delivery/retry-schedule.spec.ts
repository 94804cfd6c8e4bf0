import { RETRY_DELAYS_MS, retryDelayMs } from './retry-schedule';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const SCHEDULE = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
];

const lowest = () => 0;
const highest = () => 0.999999;

describe('retryDelayMs', () => {
  it('follows the spec: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
    expect(RETRY_DELAYS_MS).toEqual(SCHEDULE);
    SCHEDULE.forEach((step, index) => expect(retryDelayMs(index + 1, lowest)).toBe(step));
  });

  it('adds up to 20% of jitter, never less than the step', () => {
    SCHEDULE.forEach((step, index) => {
      for (let r = 0; r < 1; r += 0.01) {
        const delay = retryDelayMs(index + 1, () => r)!;
        expect(delay).toBeGreaterThanOrEqual(step);
        expect(delay).toBeLessThanOrEqual(step * 1.2);
      }
      expect(retryDelayMs(index + 1, () => 0.5)).toBe(Math.round(step * 1.1));
      expect(retryDelayMs(index + 1, highest)).toBeGreaterThan(step * 1.199);
    });
  });

  it('gives up after the last step: ten attempts in all, about three days', () => {
    expect(retryDelayMs(SCHEDULE.length, lowest)).toBe(24 * HOUR);
    expect(retryDelayMs(SCHEDULE.length + 1, lowest)).toBeNull();
    expect(retryDelayMs(50, highest)).toBeNull();
    const total = SCHEDULE.reduce((sum, step) => sum + step, 0);
    expect(total / HOUR).toBeCloseTo(75.58, 1);
  });

  it('waits at least a Retry-After, capped at the next step', () => {
    // After the first failure: 5 s, but a receiver asking for 2 minutes gets them.
    expect(retryDelayMs(1, lowest, 2 * MINUTE)).toBe(2 * MINUTE);
    // Asking for a day is capped at the next step's delay (5 min).
    expect(retryDelayMs(1, lowest, 24 * HOUR)).toBe(5 * MINUTE);
    expect(retryDelayMs(3, lowest, 24 * HOUR)).toBe(2 * HOUR);
    // The last step has no next one: its own delay caps.
    expect(retryDelayMs(9, lowest, 48 * HOUR)).toBe(24 * HOUR);
    // A shorter Retry-After than the schedule's delay changes nothing.
    expect(retryDelayMs(2, lowest, SECOND)).toBe(5 * MINUTE);
    // It does not keep an event alive past the last step.
    expect(retryDelayMs(10, lowest, MINUTE)).toBeNull();
  });

  it('refuses a count that is not a positive integer', () => {
    for (const count of [0, -1, 1.5, Number.NaN]) {
      expect(() => retryDelayMs(count, lowest)).toThrow(RangeError);
    }
  });
});
