// ISO 8601 extended format, calendar dates: a date, or a date-time with optional seconds,
// fraction and offset. A date-time without an offset is read as UTC (docs/api.md, `since`).
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
/** Every date-time of a response, `2026-03-01T09:30:00.000Z`: toISOString's length. */
export const ISO_DATE_TIME_LENGTH = 24;
/** The longest text ISO_8601 matches: `2026-03-01T09:30:00.123456789+01:00`. */
export const ISO_DATE_TIME_MAX_LENGTH = 35;

/**
 * The instant an ISO 8601 date or date-time names, or null when it is not one (or not real), to
 * the millisecond as times are stored: a fraction finer than that is rounded up, never down, so
 * that an instant between two milliseconds reads as the next one. For a stored time `t` (whole
 * milliseconds), `t >= exact instant` is then exactly `t >= the Date returned`, which is what a
 * `since` filter needs (`...00.000000001Z` keeps nothing stored at `...00.000Z`). Cutting the
 * digits instead would let that earlier millisecond through.
 */
export function parseIsoDateTime(text: string): Date | null {
  const match = ISO_8601.exec(text);
  if (!match) return null;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', offset] = match;
  const values = [year, month, day, hour, minute, second].map(Number);
  const [y, mo, d, h, mi, s] = values;
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) {
    return null;
  }
  // Whole milliseconds, plus one when any digit past them is not zero (999 + 1 carries into the
  // next second, minute, day or year through setUTCHours).
  const millis =
    Number(fraction.padEnd(3, '0').slice(0, 3)) + (/[1-9]/.test(fraction.slice(3)) ? 1 : 0);
  const offsetMinutes = parseOffset(offset);
  if (offsetMinutes === null) return null;
  // Not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const instant = new Date(0);
  instant.setUTCFullYear(y, mo - 1, d);
  instant.setUTCHours(h, mi - offsetMinutes, s, millis);
  return instant;
}

function parseOffset(offset: string | undefined): number | null {
  if (!offset || offset.toUpperCase() === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  if (hours > 23 || minutes > 59) return null;
  return sign * (hours * 60 + minutes);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
