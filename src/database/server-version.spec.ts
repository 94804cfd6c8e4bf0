import { judgeServerVersion, POSTGRES_MAJORS } from './server-version';

describe('judgeServerVersion', () => {
  it.each([
    [150000, '15.0'],
    [150014, '15.14 (Debian 15.14-0+deb12u1)'],
    [160014, '16.14'],
    [170010, '17.10'],
    [180004, '18.4'],
  ])('accepts %i (%s), within the range', (number, version) => {
    expect(judgeServerVersion(number, version)).toEqual({ kind: 'supported' });
  });

  it('refuses a server below the range, naming its version and the range', () => {
    expect(judgeServerVersion(140019, '14.19 (Debian 14.19-1.pgdg120+1)')).toEqual({
      kind: 'older',
      message:
        'PostgreSQL 14.19 is older than this service supports (PostgreSQL 15 to 18): ' +
        'upgrade the server to 15 or later',
    });
    expect(judgeServerVersion(90624, '9.6.24').kind).toBe('older');
  });

  it('warns on a server above the range, naming its version and the range', () => {
    expect(judgeServerVersion(190000, '19beta1')).toEqual({
      kind: 'newer',
      message:
        'PostgreSQL 19beta1 is newer than this service is tested on (PostgreSQL 15 to 18); ' +
        'starting anyway',
    });
  });

  it('draws the lines at the range', () => {
    expect(POSTGRES_MAJORS).toEqual({ oldest: 15, newest: 18 });
    expect(judgeServerVersion(149999, '14.99').kind).toBe('older');
    expect(judgeServerVersion(189999, '18.99').kind).toBe('supported');
    expect(judgeServerVersion(190000, '19.0').kind).toBe('newer');
  });
});
