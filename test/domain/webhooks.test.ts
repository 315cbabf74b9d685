import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWebhookBody } from '../../src/domain/signing/index.js';
import {
  buildWebhookPayload,
  checkWebhookUrl,
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

  it('classifies an IPv4-mapped IPv6 address like the IPv4 address itself', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const mapped = new URL(`http://[::ffff:${ip}]/`).hostname;
        expect(literalAddressScope(mapped)).toBe(literalAddressScope(ip));
      }),
    );
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
