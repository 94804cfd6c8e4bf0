import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * The network guard: the service must not become a proxy into its own network. An address is
 * refused unless it is globally reachable; the reason names what it is, for `webhook deliveries`.
 */

type Range = [reason: string, network: string, prefix: number];

// The IANA special-purpose registry's ranges that are not globally reachable, and multicast.
const IPV4_REFUSED: Range[] = [
  ['unspecified ("this network")', '0.0.0.0', 8],
  ['private', '10.0.0.0', 8],
  ['shared address space (CGNAT)', '100.64.0.0', 10],
  ['loopback', '127.0.0.0', 8],
  ['link-local (cloud metadata)', '169.254.0.0', 16],
  ['private', '172.16.0.0', 12],
  ['IETF protocol assignments', '192.0.0.0', 24],
  ['documentation', '192.0.2.0', 24],
  ['6to4 relay anycast', '192.88.99.0', 24],
  ['private', '192.168.0.0', 16],
  ['benchmarking', '198.18.0.0', 15],
  ['documentation', '198.51.100.0', 24],
  ['documentation', '203.0.113.0', 24],
  ['multicast', '224.0.0.0', 4],
  ['reserved (and broadcast)', '240.0.0.0', 4],
];

// IPv6 is allowed only inside global unicast (2000::/3); these are its parts that are not global.
// The forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that address.
const IPV6_REFUSED: Range[] = [
  ['IETF protocol assignments (Teredo included)', '2001::', 23],
  ['documentation', '2001:db8::', 32],
  ['documentation', '3fff::', 20],
  ['segment routing SIDs', '5f00::', 16],
];
const IPV6_OUTSIDE_GLOBAL_UNICAST: Range[] = [
  ['unspecified', '::', 128],
  ['loopback', '::1', 128],
  ['local-use NAT64', '64:ff9b:1::', 48],
  ['discard-only', '100::', 64],
  ['unique-local', 'fc00::', 7],
  ['link-local', 'fe80::', 10],
  ['site-local (deprecated)', 'fec0::', 10],
  ['multicast', 'ff00::', 8],
];

function blockLists(ranges: Range[], family: 'ipv4' | 'ipv6'): [string, BlockList][] {
  return ranges.map(([reason, network, prefix]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return [reason, list];
  });
}

const IPV4_LISTS = blockLists(IPV4_REFUSED, 'ipv4');
const IPV6_LISTS = blockLists([...IPV6_OUTSIDE_GLOBAL_UNICAST, ...IPV6_REFUSED], 'ipv6');
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** Why an address must not be connected to, or null when it is globally reachable. */
export function refusalReason(address: string): string | null {
  if (isIPv4(address)) return reasonIn(IPV4_LISTS, address, 'ipv4');
  // A scoped address (fe80::1%eth0) is local to a link by definition.
  if (address.includes('%')) return 'scoped (link-local)';
  if (!isIPv6(address)) return 'not an IP address';

  const embedded = embeddedIPv4(address);
  if (embedded !== null) {
    const reason = refusalReason(embedded.address);
    return reason === null ? null : `${embedded.form} of ${embedded.address}: ${reason}`;
  }
  const reason = reasonIn(IPV6_LISTS, address, 'ipv6');
  if (reason !== null) return reason;
  return GLOBAL_UNICAST.check(address, 'ipv6') ? null : 'not global unicast';
}

function reasonIn(lists: [string, BlockList][], address: string, family: 'ipv4' | 'ipv6') {
  for (const [reason, list] of lists) if (list.check(address, family)) return reason;
  return null;
}

/** The IPv4 address an IPv6 form carries, with the form's name; null for plain IPv6. */
function embeddedIPv4(address: string): { form: string; address: string } | null {
  const groups = ipv6Groups(address);
  const last32 = (high: number, low: number) =>
    [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);

  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated; :: and ::1 are left to the
  // IPv6 lists so that their reason reads as it should).
  if (zeros(0, 5) && groups[5] === 0xffff) {
    return { form: 'IPv4-mapped', address: last32(groups[6], groups[7]) };
  }
  if (zeros(0, 6) && groups[6] !== 0) {
    return { form: 'IPv4-compatible', address: last32(groups[6], groups[7]) };
  }
  // 64:ff9b::/96, the well-known NAT64 prefix: a NAT64 gateway would connect to the IPv4 address.
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) {
    return { form: 'NAT64', address: last32(groups[6], groups[7]) };
  }
  // 2002:AABB:CCDD::/48, 6to4: the relay would carry it to AA.BB.CC.DD.
  if (groups[0] === 0x2002) return { form: '6to4', address: last32(groups[1], groups[2]) };
  return null;
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text =
      text.slice(0, quad.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => parseInt(g, 16)) : [];
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}
