import { urlProblem } from './webhook-url';

describe('urlProblem', () => {
  it.each([
    'https://example.com/hooks',
    'https://example.com:8443/a?b=c',
    'https://[2001:db8::1]/',
  ])('accepts %s', (url) => expect(urlProblem(url, false)).toBeNull());

  it.each([
    ['http://example.com/', /must start with https:\/\//],
    ['ftp://example.com/', /must start with https:\/\//],
    ['example.com/hooks', /not an absolute URL/],
    ['https://user:pass@example.com/', /credentials/],
    ['https://user@example.com/', /credentials/],
    [`https://example.com/${'a'.repeat(2_029)}`, /longer than 2048/],
  ])('refuses %s', (url, problem) => expect(urlProblem(url, false)).toMatch(problem));

  it('accepts http:// only when allowed, and exactly 2,048 characters', () => {
    expect(urlProblem('http://example.com/', true)).toBeNull();
    const longest = `https://example.com/${'a'.repeat(2_028)}`;
    expect(longest).toHaveLength(2_048);
    expect(urlProblem(longest, false)).toBeNull();
  });
});
