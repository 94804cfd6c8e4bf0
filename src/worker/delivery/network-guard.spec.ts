import { refusalReason } from './network-guard';

describe('refusalReason', () => {
  it.each([
    ['127.0.0.1', /^loopback/],
    ['127.255.0.9', /^loopback/],
    ['::1', /^loopback/],
    ['10.0.0.1', /^private/],
    ['172.16.0.1', /^private/],
    ['172.31.255.254', /^private/],
    ['192.168.1.1', /^private/],
    ['169.254.169.254', /^link-local \(cloud metadata\)/],
    ['fe80::1', /^link-local/],
    ['fe80::1%eth0', /link-local/],
    ['fd00:ec2::254', /^unique-local/], // AWS's IPv6 metadata address
    ['fc00::1', /^unique-local/],
    ['0.0.0.0', /^unspecified/],
    ['::', /^unspecified/],
    ['100.64.0.1', /CGNAT/],
    ['224.0.0.1', /^multicast/],
    ['ff02::1', /^multicast/],
    ['255.255.255.255', /broadcast/],
    ['198.18.0.1', /^benchmarking/],
    ['192.0.2.10', /^documentation/],
    ['2001:db8::1', /^documentation/],
    ['::ffff:127.0.0.1', /^IPv4-mapped of 127\.0\.0\.1: loopback/],
    ['::ffff:7f00:1', /^IPv4-mapped of 127\.0\.0\.1: loopback/],
    ['::ffff:a9fe:a9fe', /^IPv4-mapped of 169\.254\.169\.254: link-local/],
    ['::ffff:10.1.2.3', /^IPv4-mapped of 10\.1\.2\.3: private/],
    ['::127.0.0.1', /^IPv4-compatible of 127\.0\.0\.1: loopback/],
    ['64:ff9b::a00:1', /^NAT64 of 10\.0\.0\.1: private/],
    ['64:ff9b:1::1', /^local-use NAT64/],
    ['2002:7f00:1::1', /^6to4 of 127\.0\.0\.1: loopback/],
    ['2001:0:4136:e378::1', /Teredo/],
    ['not-an-address', /^not an IP address/],
  ])('refuses %s', (address, reason) => {
    expect(refusalReason(address)).toMatch(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '172.32.0.1', // just past 172.16/12
    '100.128.0.1', // just past 100.64/10
    '2606:4700:4700::1111',
    '2a00:1450:4001:82b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows the public address %s', (address) => {
    expect(refusalReason(address)).toBeNull();
  });
});
