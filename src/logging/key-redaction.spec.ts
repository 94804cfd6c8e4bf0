import fc from 'fast-check';
import { propertyOptions } from '../../test/support/fast-check';
import {
  encode,
  encodeOnce,
  encodings,
  gluedAfter,
  gluedBefore,
  leaksOf,
  readings,
  wellFormedKeys,
} from '../../test/support/key-encodings';
import { generateApiKey } from '../auth/api-key';
import { holdsApiKey, redactApiKeys } from './key-redaction';

describe('redactApiKeys', () => {
  const key = generateApiKey();

  it.each([
    ['a bearer header', `Bearer ${key}`, 'Bearer st_[REDACTED]'],
    [
      'a query value',
      `/v1/leads?api_key=${key}&limit=1`,
      '/v1/leads?api_key=st_[REDACTED]&limit=1',
    ],
    ['a path segment', `/v1/${key}/x`, '/v1/st_[REDACTED]/x'],
    ['a JSON string', `{"msg":"failed for ${key}"}`, '{"msg":"failed for st_[REDACTED]"}'],
    ['a percent-encoded space before it', `?q=Bearer%20${key}`, '?q=Bearer%20st_[REDACTED]'],
    ['a percent-encoded underscore', `?k=st%5F${key.slice(3)}`, '?k=st_[REDACTED]'],
    ['a mistyped key', `k=${key.slice(0, 20)}-${key.slice(21)}`, 'k=st_[REDACTED]'],
    ['a bare prefix', 'st_', 'st_[REDACTED]'],
    // The forms of the issue: encoded in part or whole, glued to other text.
    ['s%74_', `?api_key=s%74_${key.slice(3)}&limit=1`, '?api_key=st_[REDACTED]&limit=1'],
    ['%73t_', `?api_key=%73t_${key.slice(3)}`, '?api_key=st_[REDACTED]'],
    ['lower-case hex', `?k=%73%74%5f${key.slice(3)}`, '?k=st_[REDACTED]'],
    ['every byte encoded', `?k=${encodeOnce(key, 1, 'upper', Math.random)}`, '?k=st_[REDACTED]'],
    ['encoded twice', `?k=%2573t_${key.slice(3)}`, '?k=st_[REDACTED]'],
    ['the hex digits encoded', `?k=%%37%33t_${key.slice(3)}`, '?k=st_[REDACTED]'],
    ['token=Bearer_', `?token=Bearer_${key}`, '?token=Bearer_st_[REDACTED]'],
    ['req_ (a request id)', `req_${key}`, 'req_st_[REDACTED]'],
    ['trace1 (a request id)', `trace1${key}`, 'trace1st_[REDACTED]'],
    ['glued on both sides', `a${key}b.c`, 'ast_[REDACTED]'],
    ['a glued, encoded key', `req_s%74_${key.slice(3)}`, 'req_st_[REDACTED]'],
    ['an encoded delimiter after it', `?k=%73t_${key.slice(3)}%26x=1`, '?k=st_[REDACTED]%26x=1'],
    ['in a parameter name', `?${key}=1`, '?st_[REDACTED]=1'],
  ])('replaces a key in %s', (_case, text, expected) => {
    expect(redactApiKeys(text)).toBe(expected);
    expect(holdsApiKey(text)).toBe(true);
  });

  it.each([
    ['inside a word', '{"column":"first_seen","db":"test_123"}'],
    ['inside a word, encoded', '?order=first%5Fseen&db=test%5F123'],
    ['no key at all', '/v1/companies?limit=2&since=2026-01-01'],
    ['an encoded path', '/v1/companies%2Fx?since=2026-03-01T09%3A30%3A00%2B02%3A00&q=%25%41'],
    ['non-ASCII escapes', '/v1/caf%C3%A9?name=%E2%82%AC%20100%'],
    ['a lone %', '100% of st'],
    ['st_ inside a word with a long tail, not a key', 'first_seenAtTheVeryLastMoment'],
    ['an ordinary UUID request id', 'req-3f2b6c1e-8d4a-4c1b-9e2f-0a1b2c3d4e5f'],
  ])('leaves text alone: %s', (_case, text) => {
    expect(redactApiKeys(text)).toBe(text);
    expect(holdsApiKey(text)).toBe(false);
  });

  it('is idempotent', () => {
    const once = redactApiKeys(`a ${key} b`);
    expect(redactApiKeys(once)).toBe(once);
  });

  it('finds a key however it is glued and encoded, and leaves no reading of it', () => {
    const after = fc.oneof(gluedAfter, fc.constantFrom('&limit=1', '/x', '=1', '?a'));
    const before = fc.oneof(gluedBefore, fc.constantFrom('api_key=', '/v1/', '?k='));
    fc.assert(
      fc.property(wellFormedKeys, before, after, encodings, (generated, head, tail, how) => {
        const text = encode(`${head}${generated}${tail}`, how);

        const redacted = redactApiKeys(text);

        expect(redacted).toContain('st_[REDACTED]');
        expect(leaksOf(redacted, generated)).toEqual([]);
        expect(redactApiKeys(redacted)).toBe(redacted);
      }),
      propertyOptions(1000),
    );
  });

  it('returns text in which no reading has `st_` exactly as it was', () => {
    const pieces = fc.constantFrom(
      'first_seen',
      'test_123',
      's',
      't',
      '_',
      'st',
      '%',
      '%25',
      '%2F',
      '%3A',
      '%20',
      '%C3%A9',
      'é',
      '/v1/companies',
      '?limit=50',
      '&since=2026-03-01',
      'abcdefghijklmnopqrstuvwxyz0123456789ABCDEF',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), encodings, (parts, how) => {
        const text = encode(parts.join(''), how);
        fc.pre(readings(text).every((reading) => !reading.includes('st_')));

        expect(redactApiKeys(text)).toBe(text);
      }),
      propertyOptions(1000),
    );
  });

  it('finds a key encoded 30 times over', () => {
    const text = `?k=%${'25'.repeat(29)}73t_${key.slice(3)}`;
    expect(redactApiKeys(text)).toBe('?k=st_[REDACTED]');
  });

  it('reads a hostile line of nested escapes in bounded work', () => {
    // 16 KiB, as much as a request line and its headers may hold: one decoding round per `25`
    // would be 5,000 rounds; the rounds are capped.
    const text = `?k=%${'25'.repeat(8_000)}73`;
    const started = process.hrtime.bigint();
    expect(redactApiKeys(text)).toBe(text);
    // A generous bound: the cap makes it about a millisecond; 5,000 rounds would take seconds.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1_000);
  });
});
