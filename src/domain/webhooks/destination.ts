import { type AddressVerdict, classifyAddress, describeVerdict } from './ip-address.js';

/** One address a resolver gave for a hostname (the shape of `dns.lookup(host, { all: true })`). */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** What the send-time rule depends on. */
export interface DestinationRules {
  /**
   * Loopback addresses (127.0.0.0/8, ::1) may be connected to: the engine's `allowLocalReceivers`
   * option on a test-mode site. Never widens anything else.
   */
  readonly allowLoopback: boolean;
}

/** The address to connect to, or why there is none. */
export type DestinationDecision =
  | { readonly allowed: true; readonly address: string; readonly family: 4 | 6 }
  | { readonly allowed: false; readonly reason: string };

/**
 * Decides, at send time, whether a webhook may go to `hostname` given every address it resolved
 * to (or, for a literal IP, that address alone), and if so which address to connect to. Every
 * address must be allowed, not only the first: a name that answers a public and a private address
 * is refused, because which one a client picks is not ours to know. The address returned is the
 * first one, which was checked: the connection must go to it, never to a second lookup's answer.
 * The reason names the hostname and the first refused address (`Destination refused: ...`).
 */
export function checkDestination(
  hostname: string,
  resolved: readonly ResolvedAddress[],
  rules: DestinationRules,
): DestinationDecision {
  if (resolved.length === 0) return { allowed: false, reason: `Destination refused: ${hostname} has no address.` };
  const verdicts: AddressVerdict[] = [];
  for (const { address } of resolved) {
    const verdict = classifyAddress(address);
    if (verdict === undefined) {
      return {
        allowed: false,
        reason: `Destination refused: ${hostname} resolves to '${printable(address)}', not an IP address.`,
      };
    }
    verdicts.push(verdict);
  }
  // A literal IP in the URL is its own (only) address; a DNS name is named with what it resolved to.
  const literal = classifyAddress(hostname.replace(/^\[(.*)\]$/, '$1')) !== undefined;
  for (const verdict of verdicts) {
    if (verdict.scope === 'public' || (verdict.scope === 'loopback' && rules.allowLoopback)) continue;
    const subject = literal ? verdict.address : `${hostname} resolves to ${verdict.address}`;
    const hint =
      verdict.scope === 'loopback' ? '; loopback needs the allowLocalReceivers engine option on a test-mode site' : '';
    return { allowed: false, reason: `Destination refused: ${subject} (${describeVerdict(verdict)}${hint}).` };
  }
  const first = verdicts[0]!;
  return { allowed: true, address: first.address, family: first.family };
}

/** A resolver's text is not ours: keep it short and printable before it lands in a record. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '').slice(0, 64);
}
