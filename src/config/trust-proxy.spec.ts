import 'reflect-metadata';
import { validateEnvironment } from './environment';
import { trustProxySetting } from './trust-proxy';

const VALID = {
  DATABASE_URL: 'postgresql://app:password@db.internal:5432/visitors',
  API_KEY_SECRET: 'a-real-secret-of-more-than-thirty-two-characters',
};

describe('TRUST_PROXY', () => {
  it('is off when unset', () => {
    const environment = validateEnvironment({ ...VALID });
    expect(environment.TRUST_PROXY).toBeUndefined();
    expect(trustProxySetting(environment.TRUST_PROXY)).toBe(false);
  });

  it.each([
    ['1', 1],
    ['2', 2],
    ['loopback', 'loopback'],
    ['uniquelocal', 'uniquelocal'],
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['loopback, 10.0.0.5, 172.16.0.0/12', 'loopback, 10.0.0.5, 172.16.0.0/12'],
    ['fd00::/8,::1', 'fd00::/8,::1'],
  ])('accepts %j, given to Express as %j', (value, setting) => {
    const environment = validateEnvironment({ ...VALID, TRUST_PROXY: value });
    expect(trustProxySetting(environment.TRUST_PROXY)).toBe(setting);
  });

  it.each([
    'true',
    'false',
    '',
    'everyone',
    '10.0.0.0/33',
    '::1/129',
    '10.0.0.0/8/1',
    '300.1.1.1',
    '1.5',
    'loopback,',
  ])('refuses %j with a message naming the variable', (value) => {
    expect(() => validateEnvironment({ ...VALID, TRUST_PROXY: value })).toThrow(/TRUST_PROXY/);
  });
});
