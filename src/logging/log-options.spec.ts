import { generateApiKey } from '../auth/api-key';
import { redactApiKeys } from './log-options';

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
  ])('replaces a key in %s', (_case, text, expected) => {
    expect(redactApiKeys(text)).toBe(expected);
  });

  it.each([
    ['inside a word', '{"column":"first_seen","db":"test_123"}'],
    ['no key at all', '/v1/companies?limit=2&since=2026-01-01'],
  ])('leaves text alone: %s', (_case, text) => {
    expect(redactApiKeys(text)).toBe(text);
  });

  it('is idempotent', () => {
    const once = redactApiKeys(`a ${key} b`);
    expect(redactApiKeys(once)).toBe(once);
  });
});
