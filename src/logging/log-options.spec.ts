import { stdTimeFunctions } from 'pino';
import { isoTimeOncePerMillisecond } from './log-options';

describe('isoTimeOncePerMillisecond', () => {
  afterEach(() => jest.restoreAllMocks());

  it("writes pino's isoTime field, made again only when the millisecond changes", () => {
    const instants = [1_764_364_500_123, 1_764_364_500_123, 1_764_364_500_124, 0, 0, 0];
    const now = jest.spyOn(Date, 'now');
    const expected = instants.map((instant) => {
      now.mockReturnValueOnce(instant);
      return stdTimeFunctions.isoTime();
    });
    const toIso = jest.spyOn(Date.prototype, 'toISOString');
    const time = isoTimeOncePerMillisecond();
    const written = instants.map((instant) => {
      now.mockReturnValueOnce(instant);
      return time();
    });
    expect(written).toEqual(expected);
    expect(toIso).toHaveBeenCalledTimes(3);
  });
});
