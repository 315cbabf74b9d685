import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  apiKeyPrefix,
  assertNonce,
  constantTimeEqual,
  constantTimeHexEqual,
  directRequestSignature,
  directResponseSignature,
  encodeSecureData,
  encodeWebhookBody,
  fillSignatureTemplate,
  generateApiKey,
  generateNonce,
  generateSecret,
  hashSecret,
  hostedPageToken,
  mergeSecureParams,
  parseDirectTimestamp,
  parseSecureData,
  parseWebhookBody,
  type RandomSource,
  sha256Hex,
  unsignedBillingFields,
  verifyDirectRequestSignature,
  verifyDirectResponseSignature,
  verifyHostedPageToken,
  verifySecret,
  verifyWebhookSignature,
  webhookSignatureHmacSha256,
  webhookSignatureMd5,
} from '../../src/domain/signing/index.js';
import { BillingError, isBillingError } from '../../src/errors.js';

/** A deterministic random source: bytes 0, 1, 2, ... so outputs are predictable. */
const countingRandom: RandomSource = (size) => Uint8Array.from({ length: size }, (_, i) => i % 256);

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

const GEM_SECRET = 'p5lxQ804MYtwZecFWNOT';
const GEM_API_ID = '1c016050-498a-012e-91b1-005056a216ab';

describe('reference §12.1: published direct vectors', () => {
  it('D1: HMAC-SHA1 of a bare message (api_id only, nothing else)', () => {
    expect(directRequestSignature({ apiId: 'this is the message to hash' }, 'foobarjones')).toBe(
      '459cceb1ad074a9082daba5c0788f12fdd6cdbd6',
    );
  });

  it('D2: request signature over api_id + timestamp + nonce + data', () => {
    const params = {
      apiId: GEM_API_ID,
      timestamp: '1234',
      nonce: '5678',
      data: 'one=two&three[four]=http%3A%2F%2Fwww.example.com',
    };
    const expected = 'c57c36e619f575958221bcd4ce156c61347a3555';
    expect(directRequestSignature(params, GEM_SECRET)).toBe(expected);
    expect(directRequestSignature({ ...params, timestamp: 1234 }, GEM_SECRET)).toBe(expected);
    expect(verifyDirectRequestSignature(params, GEM_SECRET, expected)).toBe(true);
    expect(verifyDirectRequestSignature(params, GEM_SECRET, expected.toUpperCase())).toBe(true);
    expect(verifyDirectRequestSignature(params, 'wrong-secret', expected)).toBe(false);
  });

  it('D2 data is what the gem encodes for { one: "two", three: { four: url } }', () => {
    expect(encodeSecureData({ one: 'two', three: { four: 'http://www.example.com' } })).toBe(
      'one=two&three[four]=http%3A%2F%2Fwww.example.com',
    );
  });

  const d3 = {
    apiId: GEM_API_ID,
    timestamp: '1303245326',
    nonce: '1c016050-498a-012e-91b1-005056a216ab',
    statusCode: '200',
    resultCode: '2000',
    callId: 'blah',
  };

  it('D3: response signature', () => {
    const expected = 'cfce3418f5fc4454a309fe01c918b90916d6c36a';
    expect(directResponseSignature(d3, GEM_SECRET)).toBe(expected);
    expect(directResponseSignature({ ...d3, statusCode: 200, resultCode: 2000 }, GEM_SECRET)).toBe(expected);
    expect(verifyDirectResponseSignature(d3, GEM_SECRET, expected)).toBe(true);
    expect(verifyDirectResponseSignature(d3, GEM_SECRET, expected.toUpperCase())).toBe(true);
  });

  it('D3-neg: a verifier with a different api_id rejects the response', () => {
    const other = { ...d3, apiId: '1' };
    expect(directResponseSignature(other, GEM_SECRET)).toBe('4a26230f2b9438a440c73afc19c75f3765e83f90');
    expect(verifyDirectResponseSignature(other, GEM_SECRET, 'cfce3418f5fc4454a309fe01c918b90916d6c36a')).toBe(false);
  });
});

describe('reference §12.2: constructed direct vectors', () => {
  const requests = [
    {
      id: 'D4',
      secret: GEM_SECRET,
      params: { apiId: GEM_API_ID },
      expected: '867da406cba11f9b155b40cba0703297381ed9d0',
    },
    {
      id: 'D5',
      secret: GEM_SECRET,
      params: {
        apiId: GEM_API_ID,
        timestamp: '1301148971',
        nonce: '5b2763d0-39e1-012e-858d-64b9e8d3946e',
        data: 'redirect_uri=http%3A%2F%2Fwww.example.com',
      },
      expected: '29c0c9c4c3fa3fab05725469c630808e3e395e55',
    },
    {
      id: 'D6',
      secret: 'test-secret-123',
      params: {
        apiId: 'my_api_id',
        timestamp: '1700000000',
        nonce: 'nonce-abc',
        data: 'signup[product][handle]=pro&redirect_uri=http%3A%2F%2Fwww.example.com%2Freturn%3Fa%3D1%26b%3D2',
      },
      expected: '700ed078dbd8a60a798a68f83168256bffc8a2f7',
    },
    {
      id: 'D8',
      secret: 'test-secret-123',
      params: {
        apiId: 'my_api_id',
        timestamp: '1700000000',
        nonce: 'nonce-xyz',
        data: 'redirect_uri=http%3A%2F%2Fexample.com%2Fcb&subscription_id=12345',
      },
      expected: '4bfab68d86365e18b5bebd37fff0e3a6af371396',
    },
    {
      id: 'D8b',
      secret: 'test-secret-123',
      params: {
        apiId: 'my_api_id',
        nonce: 'nonce-xyz',
        data: 'redirect_uri=http%3A%2F%2Fexample.com%2Fcb&subscription_id=12345',
      },
      expected: '19065db561bacf6f8cdc24b1759b703a4ca454f2',
    },
  ];

  it.each(requests)('$id: request signature', ({ secret, params, expected }) => {
    expect(directRequestSignature(params, secret)).toBe(expected);
    expect(verifyDirectRequestSignature(params, secret, expected)).toBe(true);
    expect(verifyDirectRequestSignature(params, secret, expected.toUpperCase())).toBe(true);
  });

  it('D4: absent parts and empty strings sign the same (message = api_id only)', () => {
    const expected = '867da406cba11f9b155b40cba0703297381ed9d0';
    expect(directRequestSignature({ apiId: GEM_API_ID, timestamp: '', nonce: '', data: '' }, GEM_SECRET)).toBe(
      expected,
    );
    expect(
      directRequestSignature(
        { apiId: GEM_API_ID, timestamp: undefined, nonce: undefined, data: undefined },
        GEM_SECRET,
      ),
    ).toBe(expected);
  });

  it('D8b: the D8 signature does not verify once the timestamp is dropped, and vice versa', () => {
    const d8 = requests.find((r) => r.id === 'D8');
    const d8b = requests.find((r) => r.id === 'D8b');
    expect(d8 && d8b).toBeTruthy();
    if (!d8 || !d8b) return;
    expect(verifyDirectRequestSignature(d8b.params, d8b.secret, d8.expected)).toBe(false);
    expect(verifyDirectRequestSignature(d8.params, d8.secret, d8b.expected)).toBe(false);
  });

  it('D6: the data string is the E3 encoding', () => {
    expect(
      encodeSecureData({
        signup: { product: { handle: 'pro' } },
        redirect_uri: 'http://www.example.com/return?a=1&b=2',
      }),
    ).toBe('signup[product][handle]=pro&redirect_uri=http%3A%2F%2Fwww.example.com%2Freturn%3Fa%3D1%26b%3D2');
  });

  const responses = [
    {
      id: 'D7',
      params: {
        apiId: 'my_api_id',
        timestamp: '1700000000',
        nonce: 'nonce-abc',
        statusCode: '422',
        resultCode: '4220',
        callId: '0123456789abcdef0123456789abcdef01234567',
      },
      expected: '9793971b151ecf99a94eadc3e737c041d7bd75ad',
    },
    {
      id: 'D7b',
      params: {
        apiId: 'my_api_id',
        timestamp: '1700000000',
        nonce: 'nonce-abc',
        statusCode: '422',
        resultCode: '4221',
        callId: 'c0ffee',
      },
      expected: 'cdfd5d3f1cb14cb94dd14e938b121d0268fc0dfa',
    },
  ];

  it.each(responses)('$id: response signature', ({ params, expected }) => {
    expect(directResponseSignature(params, 'test-secret-123')).toBe(expected);
    expect(verifyDirectResponseSignature(params, 'test-secret-123', expected)).toBe(true);
    expect(verifyDirectResponseSignature(params, 'test-secret-123', expected.toUpperCase())).toBe(true);
    expect(verifyDirectResponseSignature({ ...params, resultCode: '2000' }, 'test-secret-123', expected)).toBe(false);
  });

  it('malformed signatures are false, never an exception', () => {
    const params = { apiId: GEM_API_ID };
    const good = '867da406cba11f9b155b40cba0703297381ed9d0';
    for (const bad of [
      undefined,
      null,
      '',
      42,
      [good],
      { signature: good },
      good.slice(0, 39),
      `${good}0`,
      `${good.slice(0, 39)}g`,
      ` ${good.slice(1)}`,
      good.slice(0, 20),
    ]) {
      expect(verifyDirectRequestSignature(params, GEM_SECRET, bad)).toBe(false);
      expect(verifyDirectResponseSignature(responses[0]!.params, 'test-secret-123', bad)).toBe(false);
    }
    expect(verifyDirectRequestSignature(params, GEM_SECRET, good)).toBe(true);
  });
});

describe('reference §12.3: secure[data] encoding and parsing', () => {
  it('E1: space is +, ! is %21, : and / are escaped', () => {
    expect(encodeSecureData({ redirect_uri: 'http://www.example.com', sentence: 'Michael was here!' })).toBe(
      'redirect_uri=http%3A%2F%2Fwww.example.com&sentence=Michael+was+here%21',
    );
  });

  it('E2: nesting keeps brackets literal and insertion order', () => {
    expect(encodeSecureData({ one: { two: { three: 'four' } }, foo: 'bar' })).toBe('one[two][three]=four&foo=bar');
  });

  it('E3: nested product handle and a redirect_uri with its own query', () => {
    expect(
      encodeSecureData({
        signup: { product: { handle: 'pro' } },
        redirect_uri: 'http://www.example.com/return?a=1&b=2',
      }),
    ).toBe('signup[product][handle]=pro&redirect_uri=http%3A%2F%2Fwww.example.com%2Freturn%3Fa%3D1%26b%3D2');
  });

  it('encodes lists Rack-style, nil as a bare key, scalars with String(), and escapes key segments', () => {
    expect(
      encodeSecureData({
        hobbies: ['soccer', 'snow boarding'],
        nothing: null,
        missing: undefined,
        count: 3,
        flag: true,
        big: 10n,
        'odd key*': { 'a~b': '-._*~' },
        empty: {},
        none: [],
        ü: 'é€😀',
      }),
    ).toBe(
      'hobbies[]=soccer&hobbies[]=snow+boarding&nothing&missing&count=3&flag=true&big=10' +
        '&odd+key*[a%7Eb]=-._*%7E&%C3%BC=%C3%A9%E2%82%AC%F0%9F%98%80',
    );
  });

  it('an empty record encodes to the empty string (the gem treats it as absent)', () => {
    expect(encodeSecureData({})).toBe('');
  });

  it('E4: parses nesting, indexed lists and %20', () => {
    expect(
      parseSecureData(
        'address[city]=Raleigh&address[state]=North%20Carolina&hobbies[0]=soccer&hobbies[1]=snowboarding',
      ),
    ).toEqual({ address: { city: 'Raleigh', state: 'North Carolina' }, hobbies: ['soccer', 'snowboarding'] });
  });

  it('parses =-less keys as empty strings, + as space, [] lists and encoded brackets', () => {
    expect(parseSecureData('a&b=&c=x+y%2Bz&list[]=1&list[]=2&d%5Be%5D=f')).toEqual({
      a: '',
      b: '',
      c: 'x y+z',
      list: ['1', '2'],
      d: { e: 'f' },
    });
  });

  it('drops prototype-shadowing keys and returns objects with the normal prototype', () => {
    const parsed = parseSecureData(
      '__proto__[polluted]=1&constructor[prototype][x]=1&toString=1&ok=1&a[hasOwnProperty]=2',
    );
    expect(parsed).toEqual({ ok: '1' });
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('expands at most 10 bracket levels and keeps the rest as one key', () => {
    const deep = `a${'[b]'.repeat(12)}=v`;
    let node: unknown = parseSecureData(deep);
    for (let level = 0; level < 11; level += 1) {
      expect(typeof node).toBe('object');
      node = (node as Record<string, unknown>)[level === 0 ? 'a' : 'b'];
    }
    // 12 levels were posted, 10 are expanded, the last two stay one literal key.
    expect(node).toEqual({ '[b][b]': 'v' });
  });

  it('ignores pairs beyond the 1000-parameter limit', () => {
    const text = Array.from({ length: 1005 }, (_, i) => `k${i}=v`).join('&');
    const parsed = parseSecureData(text);
    expect(Object.keys(parsed)).toHaveLength(1000);
    expect(parsed.k999).toBe('v');
    expect(parsed.k1000).toBeUndefined();
  });

  it('E5: secure data overrides the normal params at the same path', () => {
    const normal = parseSecureData('signup[product][handle]=basic&signup[customer][email]=a%40b.c');
    const secure = parseSecureData('signup[product][handle]=pro');
    expect(mergeSecureParams(normal, secure)).toEqual({
      signup: { product: { handle: 'pro' }, customer: { email: 'a@b.c' } },
    });
    expect(normal).toEqual({ signup: { product: { handle: 'basic' }, customer: { email: 'a@b.c' } } });
  });

  describe('unsignedBillingFields (which unsigned fields a signed bill allows)', () => {
    const fields = (normal: string, secure: string) =>
      unsignedBillingFields(parseSecureData(normal), parseSecureData(secure)).map((path) => path.join('.'));
    const typed =
      'signup[customer][first_name]=A&signup[customer][email]=a%40b.c&signup[customer][zip]=1' +
      '&signup[payment_profile][card_number]=1&signup[payment_profile][cvv]=1&signup[payment_profile][billing_city]=X';

    it('refuses every unsigned field that is not customer-typed once secure data signs the product', () => {
      const signed = 'signup[product][handle]=gold';
      expect(fields(typed, signed)).toEqual([]);
      expect(fields(`${typed}&signup[product][id]=1`, signed)).toEqual(['signup.product.id']);
      expect(fields('signup[customer][id]=1&signup[subscription][next_billing_at]=2099-01-01', signed)).toEqual([
        'signup.customer.id',
        'signup.subscription.next_billing_at',
      ]);
      expect(fields('signup[coupon_code]=X&signup[components][7]=5&signup[customer][reference]=r', signed)).toEqual([
        'signup.coupon_code',
        'signup.components',
        'signup.customer.reference',
      ]);
      // An allowlist: a field it does not know is refused too, whatever its name suggests.
      expect(fields('signup[customer][shipping_note]=x&signup[whatever]=1', signed)).toEqual([
        'signup.customer.shipping_note',
        'signup.whatever',
      ]);
      // A customer-typed name under another group is not customer-typed.
      expect(fields('signup[product][email]=x', signed)).toEqual(['signup.product.email']);
    });

    it('counts any signed field outside the allowlist as signing the bill, and a customer-typed one not', () => {
      for (const signed of [
        'signup[customer][id]=3',
        'signup[coupon_code]=',
        'signup[components][1]=2',
        'signup[subscription][next_billing_at]=2030-01-01',
        'signup[customer][reference]=r',
        'signup=flat',
      ]) {
        expect(fields('signup[product][handle]=basic', signed), signed).toEqual(
          signed === 'signup=flat' ? [] : ['signup.product.handle'],
        );
      }
      expect(fields('signup[product][handle]=basic', 'signup[customer][email]=a%40b.c')).toEqual([]);
      expect(fields('signup[product][handle]=basic', 'redirect_uri=https%3A%2F%2Fx.example')).toEqual([]);
      expect(fields('signup[product][handle]=basic', '')).toEqual([]);
    });

    it('leaves out fields that secure data overrides, whole lists and flat values included', () => {
      expect(fields('signup[product][handle]=basic', 'signup[product][handle]=pro')).toEqual([]);
      expect(fields('signup[components][7]=9', 'signup[product][handle]=pro&signup[components][1]=1')).toEqual([]);
      expect(fields('signup[product][id]=1', 'signup[product]=pro')).toEqual([]);
      expect(fields('signup[product][id]=1&signup[product][handle]=x', 'signup[product][handle]=pro')).toEqual([
        'signup.product.id',
      ]);
    });

    it('ignores fields outside signup, which a signup never reads, and changes neither input', () => {
      const normal = parseSecureData('commit=Sign+up&utf8=%E2%9C%93&product[id]=1&signup[product][id]=1');
      const secure = parseSecureData('signup[product][handle]=pro');
      const copies = [structuredClone(normal), structuredClone(secure)];
      expect(unsignedBillingFields(normal, secure)).toEqual([['signup', 'product', 'id']]);
      expect([normal, secure]).toEqual(copies);
    });
  });

  it('redirect_uri is never taken from the normal params', () => {
    const normal = { redirect_uri: 'https://evil.example/', signup: { redirect_uri: 'kept' } };
    expect(mergeSecureParams(normal, {})).toEqual({ signup: { redirect_uri: 'kept' } });
    expect(mergeSecureParams(normal, { redirect_uri: 'https://good.example/' })).toEqual({
      redirect_uri: 'https://good.example/',
      signup: { redirect_uri: 'kept' },
    });
  });

  it('a secure list or scalar replaces the normal value whole', () => {
    expect(mergeSecureParams({ a: ['1', '2'], b: { c: 'd' } }, { a: ['3'], b: 'flat' })).toEqual({
      a: ['3'],
      b: 'flat',
    });
    expect(mergeSecureParams({ b: 'flat' }, { b: { c: 'd' } })).toEqual({ b: { c: 'd' } });
  });
});

describe('reference §12.4: hosted page tokens', () => {
  it.each([
    ['H1', 77, '1234', 'b59a09cc72'],
    ['H2', 42, 'abc123', '8f54d8c730'],
    ['H3', 1001, 'sharedKEY_9', '5bba74930b'],
  ])('%s: first 10 hex of SHA-1(update_payment--id--key)', (_id, subscriptionId, key, expected) => {
    expect(hostedPageToken('update_payment', subscriptionId, key)).toBe(expected);
    expect(hostedPageToken('update_payment', String(subscriptionId), key)).toBe(expected);
    expect(verifyHostedPageToken('update_payment', String(subscriptionId), expected, key)).toBe(subscriptionId);
  });

  it('H1 URL checks: plain id, pretty id, longer token, upper case', () => {
    expect(verifyHostedPageToken('update_payment', '77', 'b59a09cc72', '1234')).toBe(77);
    expect(verifyHostedPageToken('update_payment', '77-john-doe', 'b59a09cc72', '1234')).toBe(77);
    expect(verifyHostedPageToken('update_payment', '77', 'b59a09cc72ffff', '1234')).toBe(77);
    expect(verifyHostedPageToken('update_payment', '77', 'B59A09CC72', '1234')).toBe(77);
  });

  it('H1 URL checks that must 404', () => {
    expect(verifyHostedPageToken('update_payment', '77', 'b59a09cc73', '1234')).toBeUndefined();
    expect(verifyHostedPageToken('update_payment', 'john-doe', 'b59a09cc72', '1234')).toBeUndefined();
    expect(verifyHostedPageToken('update_payment', '', 'b59a09cc72', '1234')).toBeUndefined();
    expect(verifyHostedPageToken('update_payment', '-77', 'b59a09cc72', '1234')).toBeUndefined();
    expect(verifyHostedPageToken('update_payment', '78', 'b59a09cc72', '1234')).toBeUndefined();
    expect(verifyHostedPageToken('update_payment', '77', 'b59a09cc7', '1234')).toBeUndefined();
    expect(verifyHostedPageToken('update_payment', '77', 'b59a09cc72', '12345')).toBeUndefined();
    expect(verifyHostedPageToken('other_page', '77', 'b59a09cc72', '1234')).toBeUndefined();
    expect(verifyHostedPageToken('update_payment', '0', hostedPageToken('update_payment', 0, '1234'), '1234')).toBe(
      undefined,
    );
    expect(verifyHostedPageToken('update_payment', '99999999999999999999', 'b59a09cc72', '1234')).toBeUndefined();
  });
});

describe('reference §12.5: webhook signatures', () => {
  it.each([
    [
      'W1',
      '123',
      'payload[chargify]=testing&event=test',
      '19826d51b9f866b26eda1f154de192593360f8d0bcb63df8a28540a5dcf733f1',
      '3df5f2c8d2bfd40d8a8d72cb9e7fe56c',
    ],
    [
      'W2',
      '123',
      'id=123456&event=test&payload[chargify]=testing',
      'f8c4861ec8d655e5144483801474d69c691ae070062a3d8642eda7250a7f2284',
      '1cf4d0b9ef592f25d92c4e39dd67151f',
    ],
    [
      'W3',
      'site-shared-key',
      'id=1&event=subscription_state_change&payload[subscription][id]=42&payload[subscription][state]=past_due&payload[subscription][previous_state]=active&payload[event_id]=7',
      '60a4709451f0d63c3133a0d478bf2a7e11c13d7a5e6afbe4a3cc8c8ec8beb1be',
      'f17121deafc9d2e4a2b5bdc04aa9e682',
    ],
  ])('%s: HMAC-SHA256 and MD5(key + body)', (_id, key, body, hmac, md5) => {
    expect(webhookSignatureHmacSha256(body, key)).toBe(hmac);
    expect(webhookSignatureHmacSha256(Buffer.from(body), key)).toBe(hmac);
    expect(webhookSignatureMd5(body, key)).toBe(md5);
    expect(webhookSignatureMd5(new TextEncoder().encode(body), key)).toBe(md5);

    expect(verifyWebhookSignature(body, hmac, key)).toBe(true);
    expect(verifyWebhookSignature(body, hmac.toUpperCase(), key)).toBe(true);
    expect(verifyWebhookSignature(body, hmac, key, 'hmac-sha256')).toBe(true);
    expect(verifyWebhookSignature(body, md5, key, 'md5')).toBe(true);

    expect(verifyWebhookSignature(body, md5, key)).toBe(false);
    expect(verifyWebhookSignature(body, hmac, key, 'md5')).toBe(false);
    expect(verifyWebhookSignature(`${body}&x=1`, hmac, key)).toBe(false);
    expect(verifyWebhookSignature(body, hmac, `${key}x`)).toBe(false);
    expect(verifyWebhookSignature(body, `${hmac.slice(0, 63)}${hmac.endsWith('0') ? '1' : '0'}`, key)).toBe(false);
    expect(verifyWebhookSignature(body, undefined, key)).toBe(false);
    expect(verifyWebhookSignature(body, `${hmac}00`, key)).toBe(false);
  });

  it('W2 and W3 bodies are what encodeWebhookBody produces', () => {
    expect(encodeWebhookBody({ payload: { chargify: 'testing' }, event: 'test', id: 123456 })).toBe(
      'id=123456&event=test&payload[chargify]=testing',
    );
    expect(
      encodeWebhookBody({
        id: 1,
        event: 'subscription_state_change',
        payload: { subscription: { id: 42, state: 'past_due', previous_state: 'active' }, event_id: 7 },
      }),
    ).toBe(
      'id=1&event=subscription_state_change&payload[subscription][id]=42&payload[subscription][state]=past_due&payload[subscription][previous_state]=active&payload[event_id]=7',
    );
  });

  it('fills the URL template with the HMAC and, when given, the legacy MD5', () => {
    const hmac = 'ab'.repeat(32);
    const md5 = 'cd'.repeat(16);
    expect(fillSignatureTemplate('https://m.example/hook?signature={signature_hmac_sha_256}', hmac)).toBe(
      `https://m.example/hook?signature=${hmac}`,
    );
    expect(
      fillSignatureTemplate('https://m.example/hook?s=%7Bsignature_hmac_sha_256%7D&t=%7bsignature%7d', hmac, md5),
    ).toBe(`https://m.example/hook?s=${hmac}&t=${md5}`);
    expect(fillSignatureTemplate('https://m.example/hook?a={signature}&b={signature_hmac_sha_256}', hmac, md5)).toBe(
      `https://m.example/hook?a=${md5}&b=${hmac}`,
    );
    expect(fillSignatureTemplate('https://m.example/hook?a={signature}&b={signature_hmac_sha_256}', hmac)).toBe(
      `https://m.example/hook?a={signature}&b=${hmac}`,
    );
    expect(fillSignatureTemplate('https://m.example/hook', hmac, md5)).toBe('https://m.example/hook');
  });
});

describe('webhook body encoding (reference §3.1)', () => {
  it("puts id and event first, indexes lists, escapes like encodeURIComponent plus !'()*", () => {
    expect(
      encodeWebhookBody({
        payload: {
          statement: {
            events: [
              { id: 1, key: 'renewal_success' },
              { id: 2, key: 'payment_success' },
            ],
          },
          customer: { email: 'jo+1@example.com', note: "it's (really) fine*! ~ok", organization: null },
          created_at: '2016-11-04 17:06:43 -0400',
          amount: '$10/mo',
          paid: true,
          refunded: false,
        },
        event: 'statement_settled',
        id: 99,
      }),
    ).toBe(
      [
        'id=99',
        'event=statement_settled',
        'payload[statement][events][0][id]=1',
        'payload[statement][events][0][key]=renewal_success',
        'payload[statement][events][1][id]=2',
        'payload[statement][events][1][key]=payment_success',
        'payload[customer][email]=jo%2B1%40example.com',
        'payload[customer][note]=it%27s%20%28really%29%20fine%2A%21%20~ok',
        'payload[customer][organization]=',
        'payload[created_at]=2016-11-04%2017%3A06%3A43%20-0400',
        'payload[amount]=%2410%2Fmo',
        'payload[paid]=true',
        'payload[refunded]=false',
      ].join('&'),
    );
  });

  it('the documented test webhook body', () => {
    expect(encodeWebhookBody({ id: 123456, event: 'test', payload: { chargify: 'testing' } })).toBe(
      'id=123456&event=test&payload[chargify]=testing',
    );
  });

  it('parses a body back into nested objects and lists, from text or bytes', () => {
    const body =
      'id=1&event=x&payload[s][events][0][id]=5&payload[s][events][1][id]=6&payload[note]=a%20b%2Bc&payload[n]=';
    const expected = {
      id: '1',
      event: 'x',
      payload: { s: { events: [{ id: '5' }, { id: '6' }] }, note: 'a b+c', n: '' },
    };
    expect(parseWebhookBody(body)).toEqual(expected);
    expect(parseWebhookBody(Buffer.from(body))).toEqual(expected);
  });

  it("keeps lists longer than qs's default array limit as lists", () => {
    const events = Array.from({ length: 30 }, (_, i) => ({ id: String(i) }));
    const parsed = parseWebhookBody(encodeWebhookBody({ id: '1', event: 'e', payload: { events } }));
    expect(parsed).toEqual({ id: '1', event: 'e', payload: { events } });
  });
});

describe('constant-time comparison', () => {
  it('compares strings of equal and unequal lengths', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('', 'a')).toBe(false);
    expect(constantTimeEqual('a\uD800', 'a\uDBFF')).toBe(false);
    expect(constantTimeEqual('ABC', 'abc')).toBe(false);
  });

  it('hex comparison ignores ASCII case only', () => {
    expect(constantTimeHexEqual('DEADbeef', 'deadBEEF')).toBe(true);
    expect(constantTimeHexEqual('deadbeef', 'deadbee0')).toBe(false);
    expect(constantTimeHexEqual('deadbeef', 'deadbeef0')).toBe(false);
    // U+212A KELVIN SIGN lower-cases to "k" with full Unicode folding; it must not match here.
    expect(constantTimeHexEqual('\u212A', 'k')).toBe(false);
  });
});

describe('secret hashing and generation', () => {
  it('sha256Hex and hashSecret are lowercase hex SHA-256 of UTF-8', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashSecret('abc')).toBe(sha256Hex('abc'));
    // UTF-8, not Latin-1 or UTF-16: "é" hashes as the two bytes C3 A9.
    expect(sha256Hex('é')).toBe(
      createHash('sha256')
        .update(Uint8Array.from([0xc3, 0xa9]))
        .digest('hex'),
    );
    expect(sha256Hex('é')).not.toBe(
      createHash('sha256')
        .update(Uint8Array.from([0xe9]))
        .digest('hex'),
    );
  });

  it('verifySecret accepts the right secret in either hex case and rejects everything else', () => {
    const hash = hashSecret('s3cret');
    expect(verifySecret('s3cret', hash)).toBe(true);
    expect(verifySecret('s3cret', hash.toUpperCase())).toBe(true);
    expect(verifySecret('s3cret!', hash)).toBe(false);
    expect(verifySecret('s3cret', hash.slice(0, 63))).toBe(false);
    expect(verifySecret('s3cret', '')).toBe(false);
    expect(verifySecret('s3cret', `${hash.slice(0, 63)}z`)).toBe(false);
  });

  it('generateSecret uses the injected random source and encodes as base64url or hex', () => {
    expect(generateSecret(4, countingRandom)).toBe('AAECAw');
    expect(generateSecret(4, countingRandom, 'hex')).toBe('00010203');
    expect(generateSecret(3, () => Uint8Array.from([0xfb, 0xff, 0xfe]))).toBe('-__-');
    expect(generateSecret()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateSecret()).not.toBe(generateSecret());
  });

  it('generateSecret refuses bad sizes and short random sources', () => {
    expect(thrown(() => generateSecret(0))).toBeInstanceOf(BillingError);
    expect(thrown(() => generateSecret(1.5))).toBeInstanceOf(BillingError);
    expect(thrown(() => generateSecret(8, () => new Uint8Array(4)))).toBeInstanceOf(BillingError);
  });

  it('generateApiKey returns bk_<8 hex>_<48 hex> and its list prefix', () => {
    const fixed = generateApiKey(countingRandom);
    expect(fixed.prefix).toBe('bk_00010203');
    expect(fixed.key).toBe(`bk_00010203_${Buffer.from(Array.from({ length: 24 }, (_, i) => i + 4)).toString('hex')}`);
    const random = generateApiKey();
    expect(random.key).toMatch(/^bk_[0-9a-f]{8}_[0-9a-f]{48}$/);
    expect(random.key.startsWith(`${random.prefix}_`)).toBe(true);
    expect(apiKeyPrefix(random.key)).toBe(random.prefix);
    expect(generateApiKey().key).not.toBe(random.key);
    expect(verifySecret(random.key, hashSecret(random.key))).toBe(true);
  });

  it('apiKeyPrefix rejects text that is not one of our keys', () => {
    expect(apiKeyPrefix('bk_0001020')).toBeUndefined();
    expect(apiKeyPrefix(`bk_00010203_${'a'.repeat(47)}`)).toBeUndefined();
    expect(apiKeyPrefix(`xx_00010203_${'a'.repeat(48)}`)).toBeUndefined();
    expect(apiKeyPrefix(`bk_00010203_${'A'.repeat(48)}`)).toBeUndefined();
  });
});

describe('direct nonce and timestamp', () => {
  it('generateNonce is 40 lowercase hex characters from the random source', () => {
    expect(generateNonce(countingRandom)).toBe('000102030405060708090a0b0c0d0e0f10111213');
    expect(generateNonce()).toMatch(/^[0-9a-f]{40}$/);
    expect(generateNonce()).not.toBe(generateNonce());
  });

  it('assertNonce accepts up to 40 characters, counted as code points', () => {
    expect(() => assertNonce('')).not.toThrow();
    expect(() => assertNonce('a'.repeat(40))).not.toThrow();
    expect(() => assertNonce('😀'.repeat(40))).not.toThrow();
    const error = thrown(() => assertNonce('a'.repeat(41)));
    expect(isBillingError(error, 'validation')).toBe(true);
    expect((error as BillingError).messages).toEqual(['Nonce: is too long (maximum is 40 characters).']);
    expect((error as BillingError).resultCode).toBe('4220');
  });

  it('parseDirectTimestamp accepts only non-negative integer seconds', () => {
    expect(parseDirectTimestamp('1700000000')).toBe(1_700_000_000);
    expect(parseDirectTimestamp('0')).toBe(0);
    for (const bad of [
      '',
      ' 1',
      '1 ',
      '-1',
      '+1',
      '1.5',
      '1700000000.0',
      '1e9',
      '0x10',
      'abc',
      '99999999999999999999',
    ]) {
      const error = thrown(() => parseDirectTimestamp(bad));
      expect(isBillingError(error, 'validation'), bad).toBe(true);
    }
  });
});
