import fc from 'fast-check';
import { propertyOptions } from '../../test/support/fast-check';
import { ISO_DATE_TIME_MAX_LENGTH, parseIsoDateTime } from './iso-date-time';

function iso(text: string): string | null {
  return parseIsoDateTime(text)?.toISOString() ?? null;
}

describe('parseIsoDateTime', () => {
  it.each([
    // Dates: midnight UTC.
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2026-12-31', '2026-12-31T00:00:00.000Z'],
    // Date-times with Z, with or without seconds and fractions.
    ['2026-03-01T09:30:00Z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30:00.000Z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30Z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01t09:30:00z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30:00.5Z', '2026-03-01T09:30:00.500Z'],
    ['2026-03-01T09:30:00.12Z', '2026-03-01T09:30:00.120Z'],
    ['2026-03-01T09:30:00.123Z', '2026-03-01T09:30:00.123Z'],
    ['2026-03-01T09:30:00,250Z', '2026-03-01T09:30:00.250Z'],
    // Finer than a millisecond: exact at whole milliseconds, otherwise the next millisecond up
    // (stored times have milliseconds: `t >= since` must not keep a t before the instant).
    ['2026-03-01T09:30:00.000000000Z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30:00.0000Z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30:00.123000000Z', '2026-03-01T09:30:00.123Z'],
    ['2026-03-01T09:30:00.000000001Z', '2026-03-01T09:30:00.001Z'],
    ['2026-03-01T09:30:00.0000001Z', '2026-03-01T09:30:00.001Z'],
    ['2026-03-01T09:30:00.0001Z', '2026-03-01T09:30:00.001Z'],
    ['2026-03-01T09:30:00.0009999Z', '2026-03-01T09:30:00.001Z'],
    ['2026-03-01T09:30:00.001000001Z', '2026-03-01T09:30:00.002Z'],
    ['2026-03-01T09:30:00.123456789Z', '2026-03-01T09:30:00.124Z'],
    ['2026-03-01T09:30:00,5000001Z', '2026-03-01T09:30:00.501Z'],
    ['2026-03-01T09:30:00.998999999Z', '2026-03-01T09:30:00.999Z'],
    // ... carrying into the next second, minute, hour, day, month and year.
    ['2026-03-01T09:30:00.999000001Z', '2026-03-01T09:30:01.000Z'],
    ['2026-03-01T09:30:59.999999999Z', '2026-03-01T09:31:00.000Z'],
    ['2026-03-01T09:59:59.9999Z', '2026-03-01T10:00:00.000Z'],
    ['2026-02-28T23:59:59.9990001Z', '2026-03-01T00:00:00.000Z'],
    ['2024-02-28T23:59:59.999999999Z', '2024-02-29T00:00:00.000Z'],
    ['2023-12-31T23:59:59.999000001Z', '2024-01-01T00:00:00.000Z'],
    ['2023-12-31T10:00:00.000000001Z', '2023-12-31T10:00:00.001Z'],
    ['2023-12-31T23:59:59.999000001', '2024-01-01T00:00:00.000Z'],
    // ... with offsets, applied to the exact instant (the carry and the offset in either order).
    ['2024-01-01T00:59:59.999000001+01:00', '2024-01-01T00:00:00.000Z'],
    ['2023-12-31T22:59:59,9999999-01:00', '2024-01-01T00:00:00.000Z'],
    ['2024-01-01T05:29:59.999999999+05:30', '2024-01-01T00:00:00.000Z'],
    ['2024-01-01T05:30:00.000000001+0530', '2024-01-01T00:00:00.001Z'],
    ['2023-12-31T15:00:00.000000001+05', '2023-12-31T10:00:00.001Z'],
    ['9999-12-31T23:59:59.999000001Z', '+010000-01-01T00:00:00.000Z'],
    ['0000-12-31T23:59:59.9999999Z', '0001-01-01T00:00:00.000Z'],
    // Without an offset: read as UTC, whatever the process's time zone.
    ['2026-03-01T09:30:00', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30:00.250', '2026-03-01T09:30:00.250Z'],
    // Offsets, in every written form, crossing day, month and year boundaries.
    ['2026-03-01T09:30:00+02:00', '2026-03-01T07:30:00.000Z'],
    ['2026-03-01T09:30:00+0200', '2026-03-01T07:30:00.000Z'],
    ['2026-03-01T09:30:00+02', '2026-03-01T07:30:00.000Z'],
    ['2026-03-01T09:30:00-05:30', '2026-03-01T15:00:00.000Z'],
    ['2026-03-01T09:30:00+00:00', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30:00-00:00', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T01:00:00+05:45', '2026-02-28T19:15:00.000Z'],
    ['2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000Z'],
    ['2026-03-01T09:30:00+23:59', '2026-02-28T09:31:00.000Z'],
    // Bounds of each field.
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12-31T23:59:59.999Z'],
    ['2026-04-30', '2026-04-30T00:00:00.000Z'],
    // Leap years: every 4 years, not every 100, but every 400.
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['2400-02-29', '2400-02-29T00:00:00.000Z'],
    ['2026-02-28', '2026-02-28T00:00:00.000Z'],
    // Years below 100 are those years, not 19xx.
    ['0099-06-15', '0099-06-15T00:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0000-01-01', '0000-01-01T00:00:00.000Z'],
    ['0004-02-29', '0004-02-29T00:00:00.000Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'],
  ])('reads %s as %s', (text, expected) => {
    expect(iso(text)).toBe(expected);
  });

  it('reads any instant, at any precision and offset, as the first millisecond at or after it', () => {
    const MS_PER_MINUTE = 60_000;
    fc.assert(
      fc.property(
        // A millisecond in the years 0001 to 9998, how many of its 1e6 nanoseconds past it, how
        // many fraction digits are written (the exact value always fits them: see below), an offset.
        fc.integer({ min: -62_135_596_800_000, max: 253_370_764_800_000 }),
        fc.integer({ min: 0, max: 999_999 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        (millisecond, nanos, digits, offsetMinutes) => {
          // The nanoseconds past the millisecond kept by `digits` digits (cut, so the written
          // instant is at or before the exact one, and it is the written one that is read).
          const kept =
            digits <= 3 ? 0 : Math.floor(nanos / 10 ** (9 - digits)) * 10 ** (9 - digits);
          const local = new Date(millisecond + offsetMinutes * MS_PER_MINUTE);
          const wholeDigits = digits <= 3 ? 3 : digits;
          const fraction = `${String(local.getUTCMilliseconds()).padStart(3, '0')}${String(kept).padStart(6, '0')}`;
          const sign = offsetMinutes < 0 ? '-' : '+';
          const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
          const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
          const text =
            `${local
              .toISOString()
              .slice(0, 19)
              .replace(/^\+0*(\d{4})/, '$1')}` +
            `.${fraction.slice(0, wholeDigits)}${sign}${hours}:${minutes}`;

          expect(parseIsoDateTime(text)?.getTime()).toBe(millisecond + (kept > 0 ? 1 : 0));
        },
      ),
      propertyOptions(2000),
    );
  });

  it(`matches at most ISO_DATE_TIME_MAX_LENGTH (${ISO_DATE_TIME_MAX_LENGTH}) characters, the bound the document states`, () => {
    const longest = '2026-03-01T09:30:00.123456789+01:00';
    expect(longest).toHaveLength(ISO_DATE_TIME_MAX_LENGTH);
    expect(parseIsoDateTime(longest)).not.toBeNull();
    // No form is longer: one more digit of any part is refused.
    expect(parseIsoDateTime('2026-03-01T09:30:00.1234567891+01:00')).toBeNull();
    expect(parseIsoDateTime('2026-03-01T09:30:00.123456789+01:000')).toBeNull();
    expect(parseIsoDateTime('02026-03-01T09:30:00.123456789+01:00')).toBeNull();
  });

  it('reads a year below 100 as that year', () => {
    expect(parseIsoDateTime('0050-01-01')?.getUTCFullYear()).toBe(50);
  });

  it.each([
    // Not real dates.
    ['2026-13-01'],
    ['2026-00-10'],
    ['2026-01-00'],
    ['2026-01-32'],
    ['2026-04-31'],
    ['2026-06-31'],
    ['2026-09-31'],
    ['2026-11-31'],
    ['2026-02-29'],
    ['2026-02-30'],
    ['1900-02-29'],
    ['2100-02-29'],
    ['2024-02-30'],
    ['2024-13-45'],
    // Not real times or offsets.
    ['2026-03-01T24:00:00Z'],
    ['2026-03-01T23:60:00Z'],
    ['2026-03-01T23:59:60Z'],
    ['2026-03-01T25:00Z'],
    ['2026-03-01T09:30:00+24:00'],
    ['2026-03-01T09:30:00+02:60'],
    // Not ISO 8601 extended calendar dates.
    [''],
    ['yesterday'],
    ['now'],
    ['1700000000'],
    ['2026'],
    ['2026-03'],
    ['26-03-01'],
    ['2026-3-1'],
    ['2026/03/01'],
    ['20260301'],
    ['01-03-2026'],
    ['2026-03-01T'],
    ['2026-03-01T9:30'],
    ['2026-03-01T09'],
    ['2026-03-01 09:30:00Z'],
    ['2026-03-01T09:30:00.Z'],
    ['2026-03-01T09:30:00.1234567890Z'],
    ['2026-03-01T09:30:00+2'],
    ['2026-03-01T09:30:00+02:0'],
    ['2026-03-01T09:30:00 +02:00'],
    ['2026-03-01T09:30:00ZZ'],
    ['+2026-03-01'],
    ['-2026-03-01'],
    [' 2026-03-01'],
    ['2026-03-01 '],
    ['2026-03-01\n'],
    ['Sun, 01 Mar 2026 09:30:00 GMT'],
    ['2026-03-01T09:30:00.000Z[Europe/Paris]'],
  ])('refuses %j', (text) => {
    expect(parseIsoDateTime(text)).toBeNull();
  });
});
