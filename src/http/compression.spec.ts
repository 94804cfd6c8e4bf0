import { negotiateEncoding } from './compression';

describe('negotiateEncoding', () => {
  it.each([
    // Nothing asked: plain.
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    // One coding, in any case and spelling.
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['GZIP', 'gzip'],
    ['x-gzip', 'gzip'],
    // Both alike: br, smaller and faster at the levels chosen.
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['*', 'br'],
    // Weights decide.
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.9', 'gzip'],
    ['br;q=0.001, gzip;q=0.002', 'gzip'],
    [' gzip ; q=0.8 , br ; q = 0.9', 'br'],
    ['gzip;q=1.0, br;q=1.000', 'br'],
    ['gzip;Q=0.7, br;q=0.6', 'gzip'],
    // identity is acceptable unless refused, and wins when weighted above the others.
    ['gzip;q=0.5, identity', 'identity'],
    ['gzip, identity;q=0', 'gzip'],
    ['br;q=0.4, identity;q=0.5', 'identity'],
    // `*` stands for what is not named.
    ['*;q=0', 'identity'],
    ['*;q=0, gzip', 'gzip'],
    ['br;q=0, *', 'gzip'],
    ['br;q=0, gzip;q=0, *', 'identity'],
    // Refused or unknown codings: plain, even when identity is refused too.
    ['gzip;q=0', 'identity'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['identity;q=0, gzip;q=0, br;q=0', 'identity'],
    ['*;q=0, identity;q=0', 'identity'],
    ['deflate', 'identity'],
    ['zstd, compress', 'identity'],
    // Malformed entries are ignored, the rest read.
    ['gzip;q=1.5', 'identity'],
    ['gzip;q=abc, br', 'br'],
    ['br;q=0.5;x=1, gzip;q=0.1', 'gzip'],
    [',,gzip,,', 'gzip'],
    ['gzip;q=0.1234', 'identity'],
  ])('%j: %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
});
