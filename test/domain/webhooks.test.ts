import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWebhookBody } from '../../src/domain/signing/index.js';
import {
  buildWebhookPayload,
  checkDestination,
  checkWebhookUrl,
  classifyAddress,
  DEFAULT_ENDPOINT_HEALTH,
  DEFAULT_RETRY_SCHEDULE_MS,
  deliveryErrorText,
  endpointStatusFor,
  isPublicHost,
  literalAddressScope,
  retryDecision,
  testWebhookBody,
  webhookBody,
} from '../../src/domain/webhooks/index.js';
import { BillingError } from '../../src/errors.js';

const TEST = { mode: 'test', allowLocalReceivers: false } as const;
const LOCAL = { mode: 'test', allowLocalReceivers: true } as const;
const LIVE = { mode: 'live', allowLocalReceivers: true } as const;

function urlError(url: unknown, rules: Parameters<typeof checkWebhookUrl>[1]): string | undefined {
  try {
    checkWebhookUrl(url, rules);
    return undefined;
  } catch (error) {
    if (error instanceof BillingError && error.code === 'validation') return error.message;
    throw error;
  }
}

describe('webhook endpoint URL rules (spec §6)', () => {
  it('accepts public http(s) URLs on ports 80 and 443 and returns them trimmed', () => {
    expect(checkWebhookUrl('  https://hooks.example.com/x?s={signature_hmac_sha_256}  ', TEST)).toBe(
      'https://hooks.example.com/x?s={signature_hmac_sha_256}',
    );
    for (const url of [
      'http://hooks.example.com/',
      'http://hooks.example.com:80/',
      'https://hooks.example.com:443/',
      'https://hooks.example.com:80/',
      'http://93.184.216.34/',
    ]) {
      expect(urlError(url, TEST)).toBeUndefined();
    }
    expect(urlError('https://hooks.example.com/', LIVE)).toBeUndefined();
  });

  it('names the rule a URL breaks', () => {
    expect(urlError('http://hooks.example.com/', LIVE)).toBe('Url: must use HTTPS for a site in live mode.');
    expect(urlError('https://hooks.example.com:8443/', TEST)).toBe(
      'Url: port 8443 is not allowed; use port 80 or 443.',
    );
    expect(urlError('http://127.0.0.1:3000/', TEST)).toBe(
      'Url: must be publicly reachable; local receivers need the allowLocalReceivers engine option.',
    );
    expect(urlError('https://localhost:3000/', LIVE)).toBe(
      'Url: must be publicly reachable; local receivers are never allowed for a site in live mode.',
    );
    expect(urlError('mailto:a@b.co', TEST)).toBe('Url: must start with http:// or https://.');
    expect(urlError('/relative', TEST)).toBe('Url: is not a valid URL.');
    expect(urlError(42, TEST)).toBe('Url: cannot be blank.');
    expect(urlError(`https://a.example.com/${'x'.repeat(2100)}`, TEST)).toBe(
      'Url: is too long (maximum is 2048 characters).',
    );
  });

  it('allows loopback on any port only with the option, in test mode', () => {
    for (const url of [
      'http://127.0.0.1:8080/',
      'http://[::1]:9000/',
      'http://localhost:3000/',
      'http://api.localhost:1/',
      'http://2130706433:81/',
    ]) {
      expect(urlError(url, LOCAL)).toBeUndefined();
      expect(urlError(url, TEST)).toMatch(/^Url: must be publicly reachable/);
    }
    expect(urlError('https://127.0.0.1:8443/', LIVE)).toMatch(/never allowed for a site in live mode/);
  });

  it('treats private, link-local, shared, reserved and unqualified hosts as unreachable, even with the option', () => {
    const hosts = [
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '[fe80::1]',
      '[fd12:3456::1]',
      '[::]',
      '[::ffff:10.0.0.1]',
      '[64:ff9b::a00:1]',
      '[2001:db8::1]',
      'intranet',
      'db.internal',
      'nas.local',
      'router.home.arpa',
      'thing.test',
    ];
    for (const host of hosts)
      expect(urlError(`http://${host}/`, LOCAL), host).toMatch(/is a local or private address\.$/);
    expect(isPublicHost('172.32.0.1')).toBe(true);
    expect(isPublicHost('[2606:4700::1111]')).toBe(true);
    expect(isPublicHost('example.com.')).toBe(true);
  });

  it('refuses a literal IPv4-mapped or NAT64 address in a URL whatever IPv4 address it carries', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        for (const form of [`::ffff:${ip}`, `64:ff9b::${ip}`]) {
          const host = new URL(`http://[${form}]/`).hostname;
          expect(literalAddressScope(host)).toBe('forbidden');
          expect(urlError(`http://${host}/`, LOCAL)).toMatch(/is a local or private address\.$/);
        }
      }),
    );
    // Literal public addresses of both families still register.
    expect(urlError('https://[2606:4700::1111]/', LIVE)).toBeUndefined();
    expect(urlError('https://8.8.8.8/', LIVE)).toBeUndefined();
  });
});

/** Every range the webhook address rule refuses, with the range name it reports, and public addresses that pass. */
const ADDRESS_TABLE: readonly (readonly [
  address: string,
  scope: 'public' | 'loopback' | 'forbidden',
  range: string,
])[] = [
  // Loopback: its own scope, allowed only with the local-receiver option.
  ['127.0.0.1', 'loopback', 'loopback'],
  ['127.255.255.254', 'loopback', 'loopback'],
  ['::1', 'loopback', 'loopback'],
  // Private (RFC 1918), at both ends of each block.
  ['10.0.0.1', 'forbidden', 'private'],
  ['10.255.255.255', 'forbidden', 'private'],
  ['172.16.0.1', 'forbidden', 'private'],
  ['172.31.255.255', 'forbidden', 'private'],
  ['192.168.0.1', 'forbidden', 'private'],
  ['192.168.255.255', 'forbidden', 'private'],
  // Link-local, including the cloud metadata address.
  ['169.254.169.254', 'forbidden', 'linkLocal'],
  ['169.254.0.1', 'forbidden', 'linkLocal'],
  ['fe80::1', 'forbidden', 'linkLocal'],
  ['febf:ffff::1', 'forbidden', 'linkLocal'],
  // Unique-local fc00::/7.
  ['fc00::1', 'forbidden', 'uniqueLocal'],
  ['fd12:3456::1', 'forbidden', 'uniqueLocal'],
  // CGNAT 100.64/10.
  ['100.64.0.1', 'forbidden', 'carrierGradeNat'],
  ['100.127.255.255', 'forbidden', 'carrierGradeNat'],
  // Multicast.
  ['224.0.0.1', 'forbidden', 'multicast'],
  ['239.255.255.255', 'forbidden', 'multicast'],
  ['ff02::1', 'forbidden', 'multicast'],
  // Unspecified 0.0.0.0/8 and ::.
  ['0.0.0.0', 'forbidden', 'unspecified'],
  ['0.1.2.3', 'forbidden', 'unspecified'],
  ['::', 'forbidden', 'unspecified'],
  // Broadcast and reserved.
  ['255.255.255.255', 'forbidden', 'broadcast'],
  ['240.0.0.1', 'forbidden', 'reserved'],
  ['192.0.0.8', 'forbidden', 'reserved'],
  ['192.88.99.1', 'forbidden', 'reserved'],
  // Benchmarking 198.18/15 (ipaddr.js files it under reserved) and 2001:2::/48.
  ['198.18.0.1', 'forbidden', 'reserved'],
  ['198.19.255.255', 'forbidden', 'reserved'],
  ['2001:2::1', 'forbidden', 'benchmarking'],
  // Documentation.
  ['192.0.2.1', 'forbidden', 'reserved'],
  ['198.51.100.1', 'forbidden', 'reserved'],
  ['203.0.113.1', 'forbidden', 'reserved'],
  ['2001:db8::1', 'forbidden', 'reserved'],
  ['3fff::1', 'forbidden', 'reserved'],
  // IPv6 transition ranges: refused whatever they carry, public IPv4 included.
  ['64:ff9b::7f00:1', 'forbidden', 'nat64'],
  ['64:ff9b::808:808', 'forbidden', 'nat64'],
  ['64:ff9b:1::a00:1', 'forbidden', 'nat64'],
  ['2002:7f00:1::1', 'forbidden', '6to4'],
  ['2002:808:808::1', 'forbidden', '6to4'],
  ['2001::1', 'forbidden', 'teredo'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'forbidden', 'teredo'],
  ['::ffff:127.0.0.1', 'forbidden', 'ipv4Mapped'],
  ['::ffff:808:808', 'forbidden', 'ipv4Mapped'],
  ['::808:808', 'forbidden', 'ipv4Compatible'],
  ['::ffff:0:7f00:1', 'forbidden', 'rfc6145'],
  // Other special or unassigned IPv6 space.
  ['100::1', 'forbidden', 'discard'],
  ['fec0::1', 'forbidden', 'deprecatedSiteLocal'],
  ['4000::1', 'forbidden', 'notGlobalUnicast'],
  ['192.175.48.1', 'forbidden', 'as112'],
  // Public: allowed, including the addresses right next to refused blocks.
  ['8.8.8.8', 'public', 'unicast'],
  ['1.1.1.1', 'public', 'unicast'],
  ['93.184.216.34', 'public', 'unicast'],
  ['11.0.0.1', 'public', 'unicast'],
  ['172.15.255.255', 'public', 'unicast'],
  ['172.32.0.1', 'public', 'unicast'],
  ['100.63.255.255', 'public', 'unicast'],
  ['100.128.0.1', 'public', 'unicast'],
  ['169.253.255.255', 'public', 'unicast'],
  ['192.169.0.1', 'public', 'unicast'],
  ['198.17.255.255', 'public', 'unicast'],
  ['198.20.0.0', 'public', 'unicast'],
  ['223.255.255.254', 'public', 'unicast'],
  ['2606:4700::1111', 'public', 'unicast'],
  ['2001:4860:4860::8888', 'public', 'unicast'],
  ['2a00:1450:4001:80b::200e', 'public', 'unicast'],
];

describe('webhook destination addresses (send-time rule)', () => {
  it.each(ADDRESS_TABLE)('classifies %s as %s (%s)', (address, scope, range) => {
    expect(classifyAddress(address)).toMatchObject({ scope, range, family: address.includes(':') ? 6 : 4 });
  });

  it('judges the IPv4 address inside mapped, NAT64, 6to4 and Teredo addresses', () => {
    expect(classifyAddress('::ffff:127.0.0.1')?.embedded).toMatchObject({ address: '127.0.0.1', scope: 'loopback' });
    expect(classifyAddress('64:ff9b::7f00:1')?.embedded).toMatchObject({ address: '127.0.0.1', scope: 'loopback' });
    expect(classifyAddress('64:ff9b::808:808')?.embedded).toMatchObject({ address: '8.8.8.8', scope: 'public' });
    expect(classifyAddress('2002:a00:1::1')?.embedded).toMatchObject({ address: '10.0.0.1', range: 'private' });
    // Teredo keeps the client's address inverted: 80ff:fffe is 127.0.0.1.
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:80ff:fffe')?.embedded).toMatchObject({
      address: '127.0.0.1',
    });
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const own = classifyAddress(ip)!;
        for (const form of [`::ffff:${ip}`, `64:ff9b::${ip}`]) {
          const verdict = classifyAddress(form)!;
          expect(verdict.scope).toBe('forbidden');
          expect(verdict.embedded).toEqual(own);
        }
      }),
    );
  });

  it('is not an address: names, short and hex IPv4 forms, broken IPv6', () => {
    for (const text of ['hooks.example.com', '127.1', '0x7f.0.0.1', '2130706433', '1::2::3', '', '[::1]']) {
      expect(classifyAddress(text), text).toBeUndefined();
    }
  });

  const OFF = { allowLoopback: false };
  const ON = { allowLoopback: true };
  const at = (...addresses: string[]) =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('allows a name whose every address is public, and picks the first', () => {
    expect(checkDestination('hooks.example.com', at('93.184.216.34', '2606:4700::1111'), OFF)).toEqual({
      allowed: true,
      address: '93.184.216.34',
      family: 4,
    });
    expect(checkDestination('hooks.example.com', at('2606:4700::1111'), OFF)).toEqual({
      allowed: true,
      address: '2606:4700::1111',
      family: 6,
    });
  });

  it('refuses a name if any one of its addresses is refused, and says which', () => {
    expect(checkDestination('mixed.example.com', at('93.184.216.34', '10.0.0.1'), ON)).toEqual({
      allowed: false,
      reason: 'Destination refused: mixed.example.com resolves to 10.0.0.1 (private).',
    });
    expect(checkDestination('mixed.example.com', at('169.254.169.254', '93.184.216.34'), ON)).toMatchObject({
      allowed: false,
      reason: 'Destination refused: mixed.example.com resolves to 169.254.169.254 (linkLocal).',
    });
    for (const [address, scope] of ADDRESS_TABLE) {
      const decision = checkDestination('h.example.com', at('8.8.8.8', address), OFF);
      expect(decision.allowed, address).toBe(scope === 'public');
    }
  });

  it('allows loopback only with the option, and never through a transition address', () => {
    expect(checkDestination('hooks.example.test', at('127.0.0.1'), OFF)).toEqual({
      allowed: false,
      reason:
        'Destination refused: hooks.example.test resolves to 127.0.0.1 (loopback; loopback needs the allowLocalReceivers engine option on a test-mode site).',
    });
    expect(checkDestination('hooks.example.test', at('127.0.0.1'), ON)).toEqual({
      allowed: true,
      address: '127.0.0.1',
      family: 4,
    });
    expect(checkDestination('hooks.example.test', at('::1', '127.0.0.1'), ON)).toEqual({
      allowed: true,
      address: '::1',
      family: 6,
    });
    expect(checkDestination('hooks.example.test', at('::ffff:127.0.0.1'), ON)).toEqual({
      allowed: false,
      reason:
        'Destination refused: hooks.example.test resolves to ::ffff:7f00:1 (ipv4Mapped, embedding 127.0.0.1 (loopback)).',
    });
    expect(checkDestination('hooks.example.test', at('64:ff9b::7f00:1'), ON)).toMatchObject({ allowed: false });
    expect(checkDestination('hooks.example.test', at('127.0.0.1', '10.0.0.1'), ON)).toMatchObject({ allowed: false });
  });

  it('refuses no address and answers that are not addresses; names a literal IP by itself', () => {
    expect(checkDestination('gone.example.com', [], OFF)).toEqual({
      allowed: false,
      reason: 'Destination refused: gone.example.com has no address.',
    });
    expect(checkDestination('odd.example.com', at('127.1'), ON)).toEqual({
      allowed: false,
      reason: "Destination refused: odd.example.com resolves to '127.1', not an IP address.",
    });
    expect(checkDestination('10.0.0.1', at('10.0.0.1'), ON)).toEqual({
      allowed: false,
      reason: 'Destination refused: 10.0.0.1 (private).',
    });
    expect(checkDestination('[fd00::1]', at('fd00::1'), ON)).toEqual({
      allowed: false,
      reason: 'Destination refused: fd00::1 (uniqueLocal).',
    });
  });
});

describe('webhook retry schedule and endpoint health (reference §3.3)', () => {
  const policy = { schedule: DEFAULT_RETRY_SCHEDULE_MS, health: DEFAULT_ENDPOINT_HEALTH };

  it('retries +10 s, +15 s, +90 s, +180 s, then gives up after 5 attempts', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDecision(n, 'enabled', policy))).toEqual([
      { action: 'retry', delayMs: 10_000, of: 5 },
      { action: 'retry', delayMs: 15_000, of: 5 },
      { action: 'retry', delayMs: 90_000, of: 5 },
      { action: 'retry', delayMs: 180_000, of: 5 },
      { action: 'give_up', of: 5 },
    ]);
    expect(retryDecision(3, 'paused', policy)).toEqual({ action: 'retry', delayMs: 7_200_000, of: 24 });
    expect(retryDecision(24, 'paused', policy)).toEqual({ action: 'give_up', of: 24 });
    expect(retryDecision(2, 'disabled', policy).action).toBe('give_up');
  });

  it('is enabled up to 25 failures, paused for 26-50, disabled from 51', () => {
    expect([0, 25, 26, 50, 51, 500].map((n) => endpointStatusFor(n, DEFAULT_ENDPOINT_HEALTH))).toEqual([
      'enabled',
      'enabled',
      'paused',
      'paused',
      'disabled',
      'disabled',
    ]);
    expect(deliveryErrorText('404 Resource Not Found', 5, 5)).toBe('404 Resource Not Found (retry 5 of 5)');
  });
});

describe('webhook bodies and payloads', () => {
  const context = {
    site: { id: 3, subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' },
    compat: 'spec',
  } as const;

  it('writes the documented test body, which signs to vector W2', () => {
    const body = testWebhookBody(123456);
    expect(body).toBe('id=123456&event=test&payload[chargify]=testing');
    expect(createHmac('sha256', '123').update(body).digest('hex')).toBe(
      'f8c4861ec8d655e5144483801474d69c691ae070062a3d8642eda7250a7f2284',
    );
  });

  it('puts id and event first and event_id last, with site for classic events', () => {
    const event = {
      id: 7,
      key: 'subscription_state_change',
      subjectType: 'subscription',
      subjectId: 42,
      payload: {
        subscription: { id: 42, state: 'past_due', previous_state: 'active' },
        note: 'a b:c',
        when: new Date('2026-01-05T15:00:00Z'),
      },
      occurredAt: new Date('2026-01-05T15:00:00Z'),
    };
    const body = webhookBody(1, event.key, buildWebhookPayload(event, {}, context));
    expect(body).toBe(
      'id=1&event=subscription_state_change&payload[subscription][id]=42&payload[subscription][state]=past_due&payload[subscription][previous_state]=active' +
        '&payload[note]=a%20b%3Ac&payload[when]=2026-01-05%2010%3A00%3A00%20-0500&payload[site][id]=3&payload[site][subdomain]=acme&payload[event_id]=7',
    );
    const chargify = buildWebhookPayload(
      { ...event, payload: { subscription: { id: 42, state: 'cancelled' } } },
      {},
      { ...context, compat: 'chargify' },
    );
    expect(chargify).toMatchObject({ subscription: { state: 'canceled' } });
  });

  it('keeps the newer flat events flat, with an ISO 8601 UTC timestamp and no site', () => {
    const event = {
      id: 9,
      key: 'refund_success',
      subjectType: 'subscription',
      subjectId: 42,
      payload: {
        subscription_id: 42,
        refund_id: 5,
        amount_in_cents: 250,
        memo: 'x',
        timestamp: '2026-01-05T15:00:00.123Z',
      },
      occurredAt: new Date('2026-01-05T15:00:00.123Z'),
    };
    const payload = buildWebhookPayload(event, {}, context);
    expect(Object.keys(payload)).toEqual([
      'subscription_id',
      'refund_id',
      'amount_in_cents',
      'memo',
      'timestamp',
      'event_id',
    ]);
    expect(payload.timestamp).toBe('2026-01-05T15:00:00Z');
    expect(parseWebhookBody(webhookBody(2, event.key, payload))).toEqual({
      id: '2',
      event: 'refund_success',
      payload: {
        subscription_id: '42',
        refund_id: '5',
        amount_in_cents: '250',
        memo: 'x',
        timestamp: '2026-01-05T15:00:00Z',
        event_id: '9',
      },
    });
  });
});
