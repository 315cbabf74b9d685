/**
 * What kind of network a literal IP address belongs to, for the webhook URL rule "publicly
 * reachable" (spec §6). Works on the hostname as `new URL()` normalises it: IPv4 always in dotted
 * decimal (`http://2130706433/` and `http://0x7f.1/` both become `127.0.0.1`), IPv6 in brackets
 * and compressed hex (`[::ffff:7f00:1]`), so no other spelling has to be recognised here.
 */

/** `loopback`: this host; `private`: not routable on the public internet; `public`: anything else. */
export type AddressScope = 'loopback' | 'private' | 'public';

/** IPv4 ranges (network, prefix length) that are not publicly reachable, per the IANA special-purpose registry. */
const IPV4_NON_PUBLIC: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/** Parses dotted-decimal IPv4 into a 32-bit unsigned number, or undefined when it is not one. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

function inIpv4Range(address: number, network: string, prefix: number): boolean {
  const base = parseIpv4(network)!;
  const size = 2 ** (32 - prefix);
  return Math.floor(address / size) === Math.floor(base / size);
}

/** The scope of an IPv4 address given as a 32-bit number. */
export function ipv4Scope(address: number): AddressScope {
  if (inIpv4Range(address, '127.0.0.0', 8)) return 'loopback';
  return IPV4_NON_PUBLIC.some(([network, prefix]) => inIpv4Range(address, network, prefix)) ? 'private' : 'public';
}

/**
 * Parses an IPv6 address (without brackets) into its eight 16-bit groups, or undefined. Accepts
 * `::` compression and a trailing dotted IPv4 part (`::ffff:1.2.3.4`), the forms URLs may carry.
 */
export function parseIpv6(text: string): number[] | undefined {
  const zoneless = text.split('%')[0]!;
  let head = zoneless;
  const tail: number[] = [];
  const lastColon = head.lastIndexOf(':');
  const dotted = head.slice(lastColon + 1);
  if (dotted.includes('.')) {
    const v4 = parseIpv4(dotted);
    if (v4 === undefined) return undefined;
    tail.push(Math.floor(v4 / 65536), v4 % 65536);
    head = head.slice(0, lastColon + 1);
    // `::1.2.3.4` leaves `::`; `1::1.2.3.4` leaves `1::`; a single trailing colon is part of `::`.
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(halves[0]!);
  const right = halves.length === 2 ? groups(halves[1]!) : [];
  const parsed = [...left, ...right].map((g) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? Number.parseInt(g, 16) : Number.NaN));
  if (parsed.some(Number.isNaN)) return undefined;
  const given = parsed.length + tail.length;
  if (halves.length === 1 && given !== 8) return undefined;
  if (halves.length === 2 && given > 7) return undefined;
  const zeros = Array.from({ length: 8 - given }, () => 0);
  return [...parsed.slice(0, left.length), ...zeros, ...parsed.slice(left.length), ...tail];
}

/** The scope of an IPv6 address given as eight groups. IPv4-mapped and NAT64 addresses take their IPv4 part's scope. */
export function ipv6Scope(groups: readonly number[]): AddressScope {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = groups;
  const embedded = g * 65536 + h;
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0) {
    if (f === 0 && g === 0 && h === 1) return 'loopback';
    if (f === 0 && g === 0 && h === 0) return 'private';
    // ::ffff:a.b.c.d is the IPv4 address itself; the deprecated ::a.b.c.d too.
    if (f === 0xffff || f === 0) return ipv4Scope(embedded);
  }
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return ipv4Scope(embedded);
  if ((a & 0xfe00) === 0xfc00) return 'private'; // unique local fc00::/7
  if ((a & 0xffc0) === 0xfe80) return 'private'; // link local fe80::/10
  if ((a & 0xff00) === 0xff00) return 'private'; // multicast
  if (a === 0x2001 && b === 0x0db8) return 'private'; // documentation
  if (a === 0x0100 && b === 0 && c === 0 && d === 0) return 'private'; // discard-only 100::/64
  return 'public';
}

/**
 * The scope of a URL hostname when it is a literal IP address (`127.0.0.1`, `[::1]`), or undefined
 * for a DNS name.
 */
export function literalAddressScope(hostname: string): AddressScope | undefined {
  if (hostname.startsWith('[') && hostname.endsWith(']')) {
    const groups = parseIpv6(hostname.slice(1, -1));
    return groups === undefined ? 'private' : ipv6Scope(groups);
  }
  const v4 = parseIpv4(hostname);
  return v4 === undefined ? undefined : ipv4Scope(v4);
}
