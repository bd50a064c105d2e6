import { describe, expect, test } from 'vitest';
import type { NetworkInterfaceInfo } from 'node:os';
import { ipv4InIPv6, isPublicAddress, isRemotePublicAddress } from './public-address';

const NOT_PUBLIC = [
  // IPv4: this network, private, CGNAT, loopback, link-local (cloud metadata), IETF, documentation, 6to4 relay,
  // benchmarking, multicast, reserved, broadcast.
  '0.0.0.0', '0.1.2.3', '10.0.0.1', '10.255.255.255', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.8.9.10',
  '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.0.2.1', '192.88.99.1', '192.168.1.1',
  '198.18.0.1', '198.19.255.255', '198.51.100.7', '203.0.113.9', '224.0.0.251', '239.255.255.250', '240.0.0.1',
  '255.255.255.255',
  // IPv6: unspecified, loopback, IPv4-mapped, IPv4-compatible, NAT64 and 6to4 embedding a private IPv4, discard-only,
  // Teredo, benchmarking, documentation, unique-local, link-local (with a zone), site-local, multicast.
  '::', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '::ffff:10.0.0.1', '::127.0.0.1',
  '64:ff9b::10.0.0.1', '64:ff9b::a9fe:a9fe', '2002:c0a8:0101::1', '2002:7f00:1::', '100::1', '2001::1', '2001:2::1',
  '2001:db8::1', '3fff::1', 'fc00::1', 'fd00::1', 'fd12:3456:789a::1', 'fe80::1', 'fe80::1%eth0', 'febf::1',
  'fec0::1', 'ff02::1', 'ff05::1:3', '::ffff:0.0.0.0', '::ffff:255.255.255.255',
  // Not addresses at all.
  '', 'localhost', 'example.com', '127.0.0.1.', '[::1]', '1.2.3', '01.2.3.4',
];

const PUBLIC = [
  '1.1.1.1', '8.8.8.8', '93.184.215.14', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1',
  '192.0.1.1', '192.169.0.1', '198.17.255.255', '198.20.0.1', '223.255.255.255', '11.0.0.1', '169.253.0.1',
  '2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808',
  '2002:808:808::1', '2001:200::1', '3ffe::1',
];

describe('isPublicAddress', () => {
  test.each(NOT_PUBLIC)('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  test.each(PUBLIC)('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('ipv4InIPv6', () => {
  test('names the IPv4 address a mapped, NAT64 or compatible IPv6 address stands for', () => {
    const carried = ['::ffff:a9fe:a9fe', '::ffff:127.0.0.1', '64:ff9b::a9fe:a9fe', '::a9fe:a9fe', '::ffff:0:0'].map(ipv4InIPv6);
    expect(carried).toStrictEqual(['169.254.169.254', '127.0.0.1', '169.254.169.254', '169.254.169.254', '0.0.0.0']);
  });

  test('names none for IPv6 addresses of their own, 6to4 (a router) and what is not IPv6', () => {
    const none = ['::', '::1', '2002:a9fe:a9fe::1', 'fe80::1', '2606:4700:4700::1111', '64:ff9b:1::a9fe:a9fe', '127.0.0.1', 'example.com'];
    expect(none.map(ipv4InIPv6)).toStrictEqual(none.map(() => undefined));
  });
});

describe('isRemotePublicAddress', () => {
  /** A machine with a public IPv4 /24 and a home network's IPv6 /64, as os.networkInterfaces() describes them. */
  const interfaces = (): NodeJS.Dict<NetworkInterfaceInfo[]> => ({
    lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' }],
    eth0: [
      { address: '1.2.3.4', netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: '1.2.3.4/24' },
      { address: '2606:4700:10::1', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: '02:00:00:00:00:01', internal: false, cidr: '2606:4700:10::1/64', scopeid: 0 },
    ],
  });

  test("refuses this machine's own public addresses and those of its interfaces' networks, an IPv4 one carried in IPv6 too", () => {
    const own = ['1.2.3.4', '1.2.3.1', '1.2.3.255', '2606:4700:10::1', '2606:4700:10::99', '2606:4700:10:0:ffff::1', '::ffff:1.2.3.4', '64:ff9b::102:301'];
    expect(own.filter((address) => isRemotePublicAddress(address, interfaces))).toStrictEqual([]);
  });

  test('takes public addresses beside them, and refuses what is not public as before', () => {
    expect(['1.2.4.4', '8.8.8.8', '2606:4700:11::1', '2606:4700:4700::1111'].every((address) => isRemotePublicAddress(address, interfaces))).toBe(true);
    expect(NOT_PUBLIC.filter((address) => isRemotePublicAddress(address, interfaces))).toStrictEqual([]);
  });
});
