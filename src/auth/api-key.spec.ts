import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET = 'unit-test-secret-for-hashing-keys-0123456789';

/** Every key obtained by changing exactly one character of `key` to another base62 character. */
function singleCharacterVariants(key: string): string[] {
  const variants: string[] = [];
  for (let i = 0; i < key.length; i++) {
    for (const replacement of BASE62) {
      if (replacement !== key[i]) variants.push(key.slice(0, i) + replacement + key.slice(i + 1));
    }
  }
  return variants;
}

describe('generateApiKey', () => {
  it('gives st_ followed by 32 random and 6 checksum base62 characters', () => {
    for (let i = 0; i < 200; i++) {
      expect(generateApiKey()).toMatch(/^st_[0-9A-Za-z]{38}$/);
    }
  });

  it('gives keys whose checksum verifies', () => {
    for (let i = 0; i < 200; i++) {
      expect(isWellFormedApiKey(generateApiKey())).toBe(true);
    }
  });

  it('never repeats itself over 10,000 keys', () => {
    const keys = new Set(Array.from({ length: 10_000 }, () => generateApiKey()));
    expect(keys.size).toBe(10_000);
  });

  it('uses the whole base62 alphabet in the random part', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) for (const c of generateApiKey().slice(3, 35)) seen.add(c);
    expect([...seen].sort().join('')).toBe([...BASE62].sort().join(''));
  });
});

describe('isWellFormedApiKey', () => {
  it('refuses every single-character change of a valid key, prefix and checksum included', () => {
    for (let n = 0; n < 20; n++) {
      const key = generateApiKey();
      const accepted = singleCharacterVariants(key).filter((variant) =>
        isWellFormedApiKey(variant),
      );
      expect(accepted).toEqual([]);
    }
  });

  it('refuses a change of case of one character', () => {
    const key = generateApiKey();
    const i = [...key].findIndex((c, index) => index >= 3 && /[A-Za-z]/.test(c));
    const c = key[i];
    const flipped = c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase();
    expect(isWellFormedApiKey(key.slice(0, i) + flipped + key.slice(i + 1))).toBe(false);
  });

  const key = generateApiKey();
  it.each([
    ['an empty string', ''],
    ['the prefix alone', 'st_'],
    ['no prefix', key.slice(3)],
    ['another prefix', `sk_${key.slice(3)}`],
    ['an upper-case prefix', `ST_${key.slice(3)}`],
    ['a dash for the underscore', `st-${key.slice(3)}`],
    ['one character short', key.slice(0, -1)],
    ['the checksum missing', key.slice(0, -6)],
    ['one character too many at the end', `${key}0`],
    ['one character inserted', `${key.slice(0, 10)}A${key.slice(10)}`],
    ['the key twice', key + key],
    ['a space inside', `${key.slice(0, 10)} ${key.slice(11)}`],
    ['a non-base62 character', `${key.slice(0, 10)}-${key.slice(11)}`],
    ['surrounding whitespace', ` ${key} `],
    ['a huge value', `st_${'a'.repeat(10_000)}`],
  ])('refuses %s', (_case, candidate) => {
    expect(isWellFormedApiKey(candidate)).toBe(false);
  });

  it('accepts the unchanged key of that table', () => {
    expect(isWellFormedApiKey(key)).toBe(true);
  });
});

describe('hashApiKey', () => {
  it('is deterministic for a key and a secret', () => {
    const key = generateApiKey();
    expect(hashApiKey(key, SECRET)).toBe(hashApiKey(key, SECRET));
  });

  it('is a hex SHA-256 digest', () => {
    expect(hashApiKey(generateApiKey(), SECRET)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs across secrets', () => {
    const key = generateApiKey();
    expect(hashApiKey(key, SECRET)).not.toBe(hashApiKey(key, `${SECRET}x`));
  });

  it('differs across keys', () => {
    const hashes = new Set(
      Array.from({ length: 1000 }, () => hashApiKey(generateApiKey(), SECRET)),
    );
    expect(hashes.size).toBe(1000);
  });

  it('never equals nor contains the key or the secret', () => {
    for (let i = 0; i < 100; i++) {
      const key = generateApiKey();
      const hash = hashApiKey(key, SECRET);
      expect(hash).not.toBe(key);
      expect(hash).not.toContain(key);
      expect(hash).not.toContain(SECRET);
    }
  });
});

describe('displayPrefix', () => {
  it('reveals the prefix and at most 6 characters of the key', () => {
    for (let i = 0; i < 100; i++) {
      const key = generateApiKey();
      const shown = displayPrefix(key);
      expect(shown.length).toBeLessThanOrEqual('st_'.length + 6);
      expect(shown.startsWith('st_')).toBe(true);
      expect(key.startsWith(shown)).toBe(true);
    }
  });

  it('tells keys apart in practice', () => {
    const shown = new Set(Array.from({ length: 100 }, () => displayPrefix(generateApiKey())));
    expect(shown.size).toBeGreaterThan(90);
  });
});
