import { ValidateBy, type ValidationOptions } from 'class-validator';
import { isIP } from 'node:net';

// proxy-addr's names for the loopback, link-local and private (RFC 1918 / 4193) ranges.
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const HOP_COUNT = /^\d+$/;

/**
 * Express's `trust proxy` value for TRUST_PROXY: unset trusts no proxy (the peer's address is the
 * client's, whatever X-Forwarded-For says); a number trusts that many hops in front of the service;
 * otherwise the comma-separated addresses, CIDR ranges and named ranges of the proxies.
 */
export function trustProxySetting(value: string | undefined): false | number | string {
  if (value === undefined) return false;
  return HOP_COUNT.test(value) ? Number(value) : value;
}

/**
 * A hop count or a list of addresses, ranges or named ranges. `true` (trust every peer) is refused
 * on purpose: any client could then choose its own address and escape the per-address limit.
 */
export function isTrustProxy(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (HOP_COUNT.test(value)) return true;
  return value.split(',').every((entry) => {
    const trimmed = entry.trim();
    return NAMED_RANGES.has(trimmed) || isAddressOrRange(trimmed);
  });
}

function isAddressOrRange(entry: string): boolean {
  const [address, bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return HOP_COUNT.test(bits) && Number(bits) <= (version === 4 ? 32 : 128);
}

export function IsTrustProxy(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isTrustProxy',
      validator: {
        validate: isTrustProxy,
        defaultMessage: () =>
          'TRUST_PROXY must be a hop count or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal',
      },
    },
    options,
  );
}
