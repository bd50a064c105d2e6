import { isIPv4, isIPv6 } from 'node:net';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';

interface Block {
  bytes: readonly number[];
  bits: number;
}

/** Not public: this network, private (RFC 1918), CGNAT, loopback, link-local, IETF, documentation, 6to4 relay, benchmarking, multicast, reserved and broadcast. */
const REFUSED_V4 = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24',
  '224.0.0.0/4', '240.0.0.0/4',
].map(block);

/** Only global unicast is public; inside it: IETF protocol assignments (Teredo, benchmarking, ORCHID), documentation. */
const GLOBAL_UNICAST_V6 = block('2000::/3');
const REFUSED_V6 = ['2001::/23', '2001:db8::/32', '3fff::/20'].map(block);

/** IPv6 blocks that carry an IPv4 address (mapped, NAT64 well-known prefix, 6to4): the IPv4 address decides, at this byte offset. */
const EMBEDDING_V6: readonly { block: Block; offset: number }[] = [
  { block: block('::ffff:0:0/96'), offset: 12 },
  { block: block('64:ff9b::/96'), offset: 12 },
  { block: block('2002::/16'), offset: 2 },
];

/**
 * Whether an IP address is public unicast, one a host name on the internet may lead web_fetch to. Loopback,
 * private, link-local (169.254/16, fe80::/10), unique-local (fc00::/7), CGNAT, unspecified, multicast, broadcast,
 * reserved, benchmarking and documentation blocks are not, nor an IPv6 address embedding such an IPv4 one. Anything
 * that is not an IP address is not either.
 */
export function isPublicAddress(address: string): boolean {
  const bytes = addressBytes(address);
  if (bytes === undefined) return false;
  if (bytes.length === 4) return !REFUSED_V4.some((refused) => within(bytes, refused));
  for (const { block: embedding, offset } of EMBEDDING_V6) {
    if (within(bytes, embedding)) return isPublicAddress(bytes.slice(offset, offset + 4).join('.'));
  }
  return within(bytes, GLOBAL_UNICAST_V6) && !REFUSED_V6.some((refused) => within(bytes, refused));
}

/**
 * Whether a host name may lead web_fetch to `address`: public unicast (isPublicAddress), and neither an address of
 * this machine nor one in the network of any of its interfaces. A public address is this machine's or its network's
 * too: a server's own public IPv4, a home network's IPv6 prefix (the router, a NAS, a printer each have a global
 * address there, which the router's firewall keeps from the internet but not from this machine). The interfaces are
 * read at each call: addresses come and go with the network.
 */
export function isRemotePublicAddress(address: string, interfaces: () => NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces): boolean {
  return isPublicAddress(address) && !isOnThisMachineOrItsNetwork(address, Object.values(interfaces()).flat());
}

/** Whether `address` (or the IPv4 address an IPv6 one carries) is in the network of one of `interfaces`, or is one of them. */
function isOnThisMachineOrItsNetwork(address: string, interfaces: readonly (NetworkInterfaceInfo | undefined)[]): boolean {
  const bytes = addressBytes(ipv4InIPv6(address) ?? address);
  if (bytes === undefined) return false;
  return interfaces.some((entry) => {
    if (entry === undefined) return false;
    const own = addressBytes(entry.address);
    const mask = addressBytes(entry.netmask);
    if (own === undefined || mask?.length !== own.length) return false;
    // The interface's network, from its address and mask (a /32 or /128 is the address alone).
    const bits = mask.reduce((count, byte) => count + (byte.toString(2).match(/1/g)?.length ?? 0), 0);
    return within(bytes, { bytes: own, bits });
  });
}

/** Whether an IP address is this machine's loopback: 127.0.0.0/8, ::1, or an IPv6 address embedding a 127 one. */
export function isLoopbackAddress(address: string): boolean {
  const bytes = addressBytes(address);
  if (bytes === undefined) return false;
  if (bytes.length === 4) return bytes[0] === 127;
  for (const { block: embedding, offset } of EMBEDDING_V6) {
    if (within(bytes, embedding)) return bytes[offset] === 127;
  }
  return bytes.every((byte, index) => byte === (index === 15 ? 1 : 0));
}

/** IPv6 blocks a connection treats as the IPv4 address in their last four bytes: mapped, NAT64's well-known prefix, compatible. */
const IPV4_IN_V6 = ['::ffff:0:0/96', '64:ff9b::/96', '::/96'].map(block);

/**
 * The IPv4 address an IPv6 address stands for, written plainly, or undefined when it stands for none:
 * `::ffff:a9fe:a9fe` (mapped), `64:ff9b::a9fe:a9fe` (NAT64) and `::a9fe:a9fe` (compatible, deprecated) are all
 * 169.254.169.254. `::` and `::1` are IPv6's own; 6to4 (`2002::/16`) names a router, not the address it carries.
 */
export function ipv4InIPv6(address: string): string | undefined {
  const bytes = addressBytes(address);
  if (bytes?.length !== 16 || !IPV4_IN_V6.some((carrier) => within(bytes, carrier))) return undefined;
  if (bytes.every((byte, index) => index === 15 ? byte <= 1 : byte === 0)) return undefined;
  return bytes.slice(12).join('.');
}

function within(bytes: readonly number[], { bytes: prefix, bits }: Block): boolean {
  if (bytes.length !== prefix.length) return false;
  for (let index = 0; index * 8 < bits; index += 1) {
    const mask = (0xff << (8 - Math.min(8, bits - index * 8))) & 0xff;
    if (((bytes[index] ?? 0) & mask) !== ((prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

function block(cidr: string): Block {
  const [address = '', bits = ''] = cidr.split('/');
  const bytes = addressBytes(address);
  if (bytes === undefined) throw new Error(`bad block ${cidr}`);
  return { bytes, bits: Number(bits) };
}

/** The address's bytes (4 or 16), or undefined when it is not an IP address. An IPv6 zone (`%eth0`) is ignored. */
function addressBytes(address: string): number[] | undefined {
  if (isIPv4(address)) return address.split('.').map(Number);
  const bare = address.replace(/%.*$/s, '');
  if (!isIPv6(bare)) return undefined;
  const [head = '', tail] = bare.split('::');
  const groups = (part: string | undefined): number[] => {
    if (part === undefined || part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [Number.parseInt(group, 16)];
      const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const front = groups(head);
  const back = groups(tail);
  const words = tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  return words.flatMap((word) => [word >> 8, word & 0xff]);
}
