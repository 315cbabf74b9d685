import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses a webhook may be sent to: a thin rule over `ipaddr.js`, which parses the
 * address and names its special-purpose range (`range()`). The rule is an allowlist: an address is
 * `public` only when ipaddr.js calls its range `unicast` and none of the explicit CIDR rules below
 * matches; loopback (127.0.0.0/8, ::1) is its own scope, allowed only where the caller says so;
 * everything else is `forbidden` (private, link-local, unique-local, CGNAT, multicast, unspecified,
 * broadcast, reserved and documentation ranges, benchmarking, the IPv6 transition ranges, ...).
 */

/** `public`: may be connected to; `loopback`: this host; `forbidden`: never connected to. */
export type AddressScope = 'public' | 'loopback' | 'forbidden';

/** What the rule says about one address. */
export interface AddressVerdict {
  /** The address in canonical form: dotted decimal, or RFC 5952 IPv6 (`::ffff:7f00:1`). */
  readonly address: string;
  readonly family: 4 | 6;
  readonly scope: AddressScope;
  /**
   * ipaddr.js's range name (`unicast`, `loopback`, `private`, `ipv4Mapped`, `rfc6052`, ...), or the
   * name of the explicit rule that matched (`nat64`, `6to4`, `teredo`, `ipv4Compatible`,
   * `notGlobalUnicast`).
   */
  readonly range: string;
  /** For IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, Teredo, IPv4-compatible): that address judged alone. */
  readonly embedded?: AddressVerdict;
}

type V6 = ipaddr.IPv6;

/** The IPv4 address in the last 32 bits (mapped, NAT64 /96 layout, IPv4-compatible). */
const low32 = (ip: V6) => ipv4FromWords(ip.parts[6]!, ip.parts[7]!);

/**
 * IPv6 ranges that are refused whatever ipaddr.js calls them, each with where its IPv4 address
 * sits. Checked before `range()`, so these names are the ones reported. Every one of them reaches
 * an IPv4 host through a translator or tunnel, so the IPv6 address alone says nothing about where
 * the packet ends up: refused outright, with the embedded IPv4 address judged for the reason text.
 */
const IPV6_TRANSITION: readonly { cidr: [V6, number]; name: string; embedded: (ip: V6) => ipaddr.IPv4 }[] = [
  { cidr: ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), name: 'ipv4Mapped', embedded: low32 },
  { cidr: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), name: 'nat64', embedded: low32 },
  // RFC 8215 local-use NAT64: the prefix length is the operator's; judge the common /96 layout.
  { cidr: ipaddr.IPv6.parseCIDR('64:ff9b:1::/48'), name: 'nat64', embedded: low32 },
  {
    cidr: ipaddr.IPv6.parseCIDR('2002::/16'),
    name: '6to4',
    embedded: (ip) => ipv4FromWords(ip.parts[1]!, ip.parts[2]!),
  },
  // Teredo: the client's IPv4 address is stored inverted in the last 32 bits.
  {
    cidr: ipaddr.IPv6.parseCIDR('2001::/32'),
    name: 'teredo',
    embedded: (ip) => ipv4FromWords(~ip.parts[6]! & 0xffff, ~ip.parts[7]! & 0xffff),
  },
];

/** Deprecated IPv4-compatible addresses (`::a.b.c.d`, RFC 4291); `::` and `::1` are named by ipaddr.js first. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/** All global unicast space (RFC 4291); anything outside it that ipaddr.js leaves as `unicast` is unassigned. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

function ipv4FromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function judgeIpv4(ip: ipaddr.IPv4): AddressVerdict {
  const range = ip.range();
  const scope = range === 'unicast' ? 'public' : range === 'loopback' ? 'loopback' : 'forbidden';
  return { address: ip.toString(), family: 4, scope, range };
}

function judgeIpv6(ip: V6): AddressVerdict {
  const address = ip.toRFC5952String();
  for (const rule of IPV6_TRANSITION) {
    if (ip.match(rule.cidr)) {
      return { address, family: 6, scope: 'forbidden', range: rule.name, embedded: judgeIpv4(rule.embedded(ip)) };
    }
  }
  const range = ip.range();
  if (range === 'loopback') return { address, family: 6, scope: 'loopback', range };
  if (range !== 'unicast') return { address, family: 6, scope: 'forbidden', range };
  if (ip.match(IPV4_COMPATIBLE)) {
    return { address, family: 6, scope: 'forbidden', range: 'ipv4Compatible', embedded: judgeIpv4(low32(ip)) };
  }
  if (!ip.match(GLOBAL_UNICAST)) return { address, family: 6, scope: 'forbidden', range: 'notGlobalUnicast' };
  return { address, family: 6, scope: 'public', range };
}

/**
 * Judges an IP address as a resolver returns it (`93.184.216.34`, `2606:2800::1`, no brackets),
 * or undefined when the text is not one. IPv4 must be four decimal parts: the short and hex forms
 * some parsers accept (`127.1`, `0x7f.0.0.1`) are not addresses here. ipaddr.js reads the
 * deprecated `::a.b.c.d` spelling as `::ffff:a.b.c.d`; both are refused, and what a caller connects
 * to is always the canonical `address` judged here, never the text it was given.
 */
export function classifyAddress(text: string): AddressVerdict | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return judgeIpv4(ipaddr.IPv4.parse(text));
  if (!text.includes(':') || !ipaddr.IPv6.isValid(text)) return undefined;
  return judgeIpv6(ipaddr.IPv6.parse(text));
}

/**
 * The scope of a URL hostname when it is a literal IP address (`127.0.0.1`, `[::1]`), or undefined
 * for a DNS name. Works on the hostname as `new URL()` normalises it: IPv4 always in dotted decimal
 * (`http://2130706433/` and `http://0x7f.1/` both become `127.0.0.1`), IPv6 in brackets. A
 * bracketed hostname that is not a valid IPv6 address is `forbidden`.
 */
export function literalAddressScope(hostname: string): AddressScope | undefined {
  if (hostname.startsWith('[') && hostname.endsWith(']')) {
    return classifyAddress(hostname.slice(1, -1))?.scope ?? 'forbidden';
  }
  return ipaddr.IPv4.isValidFourPartDecimal(hostname) ? classifyAddress(hostname)?.scope : undefined;
}

/** A short description of a verdict for error texts: `loopback`, `ipv4Mapped, embedding 127.0.0.1 (loopback)`. */
export function describeVerdict(verdict: AddressVerdict): string {
  const embedded = verdict.embedded;
  return embedded === undefined ? verdict.range : `${verdict.range}, embedding ${embedded.address} (${embedded.range})`;
}
