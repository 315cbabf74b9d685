import type { IssuedDirectCredentials } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { buildSecureFields, verifyDirectRedirect } from '../../src/direct-post-helpers.js';
import {
  directRequestSignature,
  encodeSecureData,
  type FormInput,
  hashSecret,
} from '../../src/domain/signing/index.js';
import {
  DIRECT_SUCCESS_RESULT_CODE,
  type DirectPostForm,
  type DirectPostResult,
  DirectPostService,
  directCallJson,
  formParamsFromJson,
  parseDirectForm,
} from '../../src/services/direct-post-service.js';
import { SubscriptionService } from '../../src/services/subscription-service.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = '4111111111111111';
const RETURN = 'https://merchant.example/return?from=form';

type Pairs = readonly (readonly [string, string])[];

/** The normal (unsigned) signup fields a merchant's form posts, as name/value pairs. */
function signupFields(overrides: Readonly<Record<string, string>> = {}, drop: readonly string[] = []): Pairs {
  const fields: Record<string, string> = {
    'signup[customer][first_name]': 'Ada',
    'signup[customer][last_name]': 'Lovelace',
    'signup[customer][email]': 'ada@example.com',
    'signup[payment_profile][first_name]': 'Ada',
    'signup[payment_profile][last_name]': 'Lovelace',
    'signup[payment_profile][card_number]': VISA,
    'signup[payment_profile][expiration_month]': '12',
    'signup[payment_profile][expiration_year]': '2030',
    'signup[payment_profile][cvv]': '987',
    ...overrides,
  };
  for (const name of drop) delete fields[name];
  return Object.entries(fields);
}

/** The parts of a hand-made `secure[...]` group; `undefined` parts are not posted at all. */
interface SecureParts {
  readonly timestamp?: string;
  readonly nonce?: string;
  readonly data?: FormInput;
  /** The exact `secure[data]` string, instead of encoding `data`. */
  readonly rawData?: string;
  /** Replaces the computed signature. */
  readonly signature?: string;
}

/** A form body exactly as a browser would post it (brackets percent-encoded), read the way the binding reads it. */
function formPost(apiId: string, apiSecret: string, secure: SecureParts, fields: Pairs): DirectPostForm {
  const data = secure.rawData ?? (secure.data === undefined ? undefined : encodeSecureData(secure.data));
  const signature =
    secure.signature ??
    directRequestSignature({ apiId, timestamp: secure.timestamp, nonce: secure.nonce, data }, apiSecret);
  const pairs: [string, string][] = [['secure[api_id]', apiId]];
  if (secure.timestamp !== undefined) pairs.push(['secure[timestamp]', secure.timestamp]);
  if (secure.nonce !== undefined) pairs.push(['secure[nonce]', secure.nonce]);
  if (data !== undefined) pairs.push(['secure[data]', data]);
  pairs.push(['secure[signature]', signature], ...fields.map(([k, v]): [string, string] => [k, v]));
  return parseDirectForm(new URLSearchParams(pairs).toString());
}

function flipFirstHex(signature: string): string {
  return (signature[0] === 'a' ? 'b' : 'a') + signature.slice(1);
}

async function setup(f: EngineFixture) {
  const created = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'America/New_York' });
  const other = await f.engine.sites.create({ subdomain: 'globex', currency: 'EUR', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const basic = await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 500,
    interval: 1,
    intervalUnit: 'month',
  });
  const deps = { storage: f.storage, clock: f.clock, gateway: f.gateway, emitter: { emit() {} } };
  const direct = new DirectPostService(deps, new SubscriptionService(deps));
  const creds: IssuedDirectCredentials = created.direct;
  /** A signup signed by the merchant helper, with the product and redirect in secure data. */
  const signedSignup = (
    fields: Pairs = signupFields(),
    data: FormInput = { signup: { product: { handle: 'pro' } } },
  ) => {
    const secure = buildSecureFields({
      apiId: creds.apiId,
      apiSecret: creds.apiSecret,
      data,
      redirectUri: RETURN,
      now: f.clock.now(),
    });
    const body = new URLSearchParams([
      ...Object.entries(secure.fields),
      ...fields.map(([k, v]): [string, string] => [k, v]),
    ]);
    return parseDirectForm(body.toString());
  };
  /**
   * A signup whose secure data signs nothing of the bill (only the redirect): the product and
   * everything else come from normal fields, as the spec's plain forms post them.
   */
  const openSignup = (fields: Pairs = signupFields(), handle = 'pro') =>
    signedSignup([['signup[product][handle]', handle], ...fields], {});
  return {
    acme,
    family,
    direct,
    creds,
    otherCreds: other.direct,
    site: created.site,
    signedSignup,
    openSignup,
    basicId: basic.product.id,
  };
}

async function storedCall(f: EngineFixture, siteId: number, id: string) {
  return f.storage.transaction((tx) => tx.directCalls.findById(siteId, id));
}

function errorsOf(result: DirectPostResult): unknown {
  return (result.call.response.result as { errors: unknown }).errors;
}

/** The direct-post interface at service level: signup, card update, replay rules and call records. */
export function directPostSuite(harness: StorageHarness): void {
  describe(`direct post (${harness.name})`, () => {
    const fixture = useEngine(harness);

    describe('signup', () => {
      it('creates the subscription with the main signup command and redirects with a response signature that verifies', async () => {
        const f = fixture();
        const { acme, direct, creds, site, signedSignup } = await setup(f);
        const result = await direct.signup(signedSignup(), { contentType: 'form' });
        expect(result.statusCode).toBe(200);
        expect(result.resultCode).toBe(DIRECT_SUCCESS_RESULT_CODE);
        const redirect = result.redirect!;
        expect(`${redirect.origin}${redirect.pathname}`).toBe('https://merchant.example/return');
        expect(redirect.searchParams.get('from')).toBe('form');
        expect([...redirect.searchParams.keys()]).toEqual([
          'from',
          'api_id',
          'timestamp',
          'nonce',
          'status_code',
          'result_code',
          'call_id',
          'signature',
        ]);
        const verified = verifyDirectRedirect(redirect, creds);
        expect(verified).toMatchObject({
          ok: true,
          success: true,
          statusCode: '200',
          resultCode: '2000',
          callId: result.call.id,
        });
        expect(result.call.id).toMatch(/^[0-9a-f]{40}$/);
        const [view, ...more] = await acme.subscriptions.list();
        expect(more).toHaveLength(0);
        expect(view!.product.product.handle).toBe('pro');
        expect(view!.customer.email).toBe('ada@example.com');
        expect(view!.paymentProfile?.lastFour).toBe('1111');
        expect(f.gateway.charges.size).toBe(1);
        const stored = await storedCall(f, site.id, result.call.id);
        expect(stored).toMatchObject({
          apiId: creds.apiId,
          success: true,
          nonce: verified.nonce,
          timestamp: verified.timestamp,
        });
        const response = stored!.response as { signup: { subscription: { id: number }; customer: { email: string } } };
        expect(response.signup.subscription.id).toBe(view!.subscription.id);
        expect(response.signup.customer.email).toBe('ada@example.com');
        // The next renewal as it will be assessed: the pinned price for the next period, no discount.
        const manifest = (stored!.response as { signup: { next_billing_manifest: Record<string, unknown> } }).signup
          .next_billing_manifest;
        expect(manifest).toMatchObject({
          period_type: 'recurring',
          subtotal_in_cents: view!.product.version.terms.priceInCents,
          total_discount_in_cents: 0,
          total_in_cents: view!.product.version.terms.priceInCents,
          line_items: [
            {
              transaction_type: 'charge',
              kind: 'baseline',
              amount_in_cents: view!.product.version.terms.priceInCents,
              discount_amount_in_cents: 0,
            },
          ],
        });
        expect(new Date(String(manifest.start_date)).getTime()).toBe(view!.subscription.currentPeriodEndsAt.getTime());
        expect(stored!.response).toMatchObject({
          result: { status_code: '200', result_code: '2000', errors: [] },
          meta: { status_code: '200', result_code: '2000', errors: [] },
        });
      });

      it('never stores the card number, CVV or expiry in the call, even when they were signed into secure data', async () => {
        const f = fixture();
        const { direct, site, signedSignup } = await setup(f);
        const data = {
          signup: { product: { handle: 'pro' }, payment_profile: { card_number: '5555555555554444', cvv: '321' } },
        };
        const result = await direct.signup(signedSignup(signupFields(), data), { contentType: 'form' });
        expect(result.resultCode).toBe('2000');
        const stored = await storedCall(f, site.id, result.call.id);
        const text = JSON.stringify(stored);
        for (const cardNumber of [VISA, '5555555555554444']) expect(text).not.toContain(cardNumber);
        // Three-digit CVVs can occur by chance inside random ids and nonces, so look for them as values.
        for (const cvv of ['987', '321']) {
          expect(text).not.toContain(`"${cvv}"`);
          expect(text).not.toMatch(new RegExp(`cvv(%5D|\\])?=${cvv}`));
        }
        const request = stored!.request as {
          signup: { payment_profile: Record<string, string> };
          secure: { data: string };
        };
        expect(request.signup.payment_profile).toEqual({
          first_name: 'Ada',
          last_name: 'Lovelace',
          card_number: '',
          expiration_month: '',
          expiration_year: '',
          cvv: '',
        });
        expect(request.secure.data).toContain('signup[product][handle]=pro');
        expect(request.secure.data).toContain('signup[payment_profile][card_number]=&');
      });

      it('lets secure data override normal fields and reads redirect_uri only from secure data', async () => {
        const f = fixture();
        const { acme, direct, signedSignup } = await setup(f);
        const fields = [
          ...signupFields({ 'signup[product][handle]': 'basic' }),
          ['redirect_uri', 'https://evil.example/'],
        ] as const;
        const result = await direct.signup(signedSignup(fields), { contentType: 'form' });
        expect(result.resultCode).toBe('2000');
        expect(result.redirect!.host).toBe('merchant.example');
        const [view] = await acme.subscriptions.list();
        expect(view!.product.product.handle).toBe('pro');
      });

      it('refuses a replayed post with 4221, records it as a new call and charges once', async () => {
        const f = fixture();
        const { acme, direct, creds, site, signedSignup } = await setup(f);
        const form = signedSignup();
        const first = await direct.signup(form, { contentType: 'form' });
        const again = await direct.signup(form, { contentType: 'form' });
        expect(first.resultCode).toBe('2000');
        expect(again.resultCode).toBe('4221');
        expect(again.statusCode).toBe(409);
        expect(again.call.id).not.toBe(first.call.id);
        const verified = verifyDirectRedirect(again.redirect!, creds);
        expect(verified).toMatchObject({ ok: true, success: false, resultCode: '4221', callId: again.call.id });
        expect(await storedCall(f, site.id, again.call.id)).toMatchObject({ success: false });
        expect(await acme.subscriptions.list()).toHaveLength(1);
        expect(f.gateway.chargeCalls).toBe(1);
      });

      it('lets exactly one of two concurrent copies of a post through', async () => {
        const f = fixture();
        const { acme, direct, signedSignup } = await setup(f);
        const form = signedSignup();
        const results = await Promise.all([
          direct.signup(form, { contentType: 'form' }),
          direct.signup(form, { contentType: 'form' }),
        ]);
        expect(results.map((r) => r.resultCode).sort()).toEqual(['2000', '4221']);
        expect(await acme.subscriptions.list()).toHaveLength(1);
      });

      it('generates and reflects a timestamp and nonce when neither is sent, and does no duplicate check', async () => {
        const f = fixture();
        const { acme, direct, creds } = await setup(f);
        const data = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const form = formPost(creds.apiId, creds.apiSecret, { data }, signupFields());
        const first = await direct.signup(form, { contentType: 'form' });
        const second = await direct.signup(form, { contentType: 'form' });
        expect([first.resultCode, second.resultCode]).toEqual(['2000', '2000']);
        const verified = verifyDirectRedirect(first.redirect!, creds);
        expect(verified.ok).toBe(true);
        expect(verified.nonce).toMatch(/^[0-9a-f]{40}$/);
        expect(verified.timestamp).toBe(String(Math.floor(f.clock.now().getTime() / 1000)));
        expect(first.call.nonce).toBe(verified.nonce);
        expect(verifyDirectRedirect(second.redirect!, creds).nonce).not.toBe(verified.nonce);
        expect(await acme.subscriptions.list()).toHaveLength(2);
      });

      it('does no duplicate check for a nonce sent without a timestamp, and reflects the nonce', async () => {
        const f = fixture();
        const { acme, direct, creds } = await setup(f);
        const data = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const form = formPost(creds.apiId, creds.apiSecret, { nonce: 'n-1', data }, signupFields());
        const first = await direct.signup(form, { contentType: 'form' });
        const second = await direct.signup(form, { contentType: 'form' });
        expect([first.resultCode, second.resultCode]).toEqual(['2000', '2000']);
        expect(verifyDirectRedirect(second.redirect!, creds)).toMatchObject({ ok: true, nonce: 'n-1' });
        expect(await acme.subscriptions.list()).toHaveLength(2);
      });

      it('does not reject an old timestamp by age', async () => {
        const f = fixture();
        const { direct, creds } = await setup(f);
        const data = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const form = formPost(
          creds.apiId,
          creds.apiSecret,
          { timestamp: '1000000000', nonce: 'old', data },
          signupFields(),
        );
        const result = await direct.signup(form, { contentType: 'form' });
        expect(result.resultCode).toBe('2000');
        expect(verifyDirectRedirect(result.redirect!, creds).timestamp).toBe('1000000000');
      });

      it('refuses a tampered signature with 4001, records the call and creates nothing', async () => {
        const f = fixture();
        const { acme, direct, creds, site } = await setup(f);
        const data = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const good = directRequestSignature(
          { apiId: creds.apiId, timestamp: '1768478400', nonce: 'n-2', data: encodeSecureData(data) },
          creds.apiSecret,
        );
        const secure = { timestamp: '1768478400', nonce: 'n-2', data, signature: flipFirstHex(good) };
        const result = await direct.signup(formPost(creds.apiId, creds.apiSecret, secure, signupFields()), {
          contentType: 'form',
        });
        expect(result).toMatchObject({ statusCode: 401, resultCode: '4001' });
        // The redirect_uri of unverified data is not trusted, and no default is registered.
        expect(result.redirect).toBeUndefined();
        expect(errorsOf(result)).toEqual([
          { attribute: 'signature', message: 'Signature: does not match the request.' },
        ]);
        expect(await storedCall(f, site.id, result.call.id)).toMatchObject({ success: false, apiId: creds.apiId });
        expect(await acme.subscriptions.list()).toHaveLength(0);
        expect(await acme.customers.list()).toHaveLength(0);
        expect(f.gateway.chargeCalls).toBe(0);
      });

      it('refuses secure data changed after signing with 4001', async () => {
        const f = fixture();
        const { acme, direct, creds } = await setup(f);
        const signed = { redirect_uri: RETURN, signup: { product: { handle: 'basic' } } };
        const signature = directRequestSignature(
          { apiId: creds.apiId, nonce: 'n-3', data: encodeSecureData(signed) },
          creds.apiSecret,
        );
        const tampered = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const result = await direct.signup(
          formPost(creds.apiId, creds.apiSecret, { nonce: 'n-3', data: tampered, signature }, signupFields()),
          { contentType: 'form' },
        );
        expect(result.resultCode).toBe('4001');
        expect(await acme.subscriptions.list()).toHaveLength(0);
      });

      it('sends a refused signature only to the redirect URI registered for the API user', async () => {
        const f = fixture();
        const { direct, site } = await setup(f);
        const apiId = 'registered-user';
        const apiSecret = 'registered-secret';
        await f.storage.transaction((tx) =>
          tx.credentials.insertDirect({
            siteId: site.id,
            apiId,
            apiSecret,
            apiPasswordHash: hashSecret('pw'),
            defaultRedirectUri: 'https://merchant.example/default',
            createdAt: f.clock.now(),
            revokedAt: null,
          }),
        );
        const data = { redirect_uri: 'https://evil.example/steal' };
        const result = await direct.signup(
          formPost(apiId, apiSecret, { nonce: 'n', data, signature: '0'.repeat(40) }, signupFields()),
          {
            contentType: 'form',
          },
        );
        expect(result.redirect!.href.startsWith('https://merchant.example/default?')).toBe(true);
        expect(verifyDirectRedirect(result.redirect!, { apiId, apiSecret })).toMatchObject({
          ok: true,
          resultCode: '4001',
        });
        // A valid post without a redirect_uri falls back to the same default.
        const valid = await direct.signup(
          formPost(apiId, apiSecret, { nonce: 'n2', data: { signup: { product: { handle: 'pro' } } } }, signupFields()),
          { contentType: 'form' },
        );
        expect(valid.resultCode).toBe('2000');
        expect(valid.redirect!.pathname).toBe('/default');
      });

      it('refuses an unknown or revoked api_id without recording a call', async () => {
        const f = fixture();
        const { direct, creds } = await setup(f);
        const data = { redirect_uri: RETURN };
        const unknown = formPost('nobody', creds.apiSecret, { data }, signupFields());
        expect((await rejection(direct.signup(unknown, { contentType: 'form' }))).code).toBe('unauthorized');
        await f.engine.sites.rotateDirectCredentials('acme');
        const revoked = formPost(creds.apiId, creds.apiSecret, { data }, signupFields());
        expect((await rejection(direct.signup(revoked, { contentType: 'form' }))).code).toBe('unauthorized');
        const noApiId = parseDirectForm('signup[product][handle]=pro');
        expect((await rejection(direct.signup(noApiId, { contentType: 'form' }))).code).toBe('unauthorized');
      });

      it('answers a malformed timestamp or an over-long nonce with 4220 and creates nothing', async () => {
        const f = fixture();
        const { acme, direct, creds } = await setup(f);
        const data = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const secure = { timestamp: '17.5', nonce: 'x'.repeat(41), data };
        const result = await direct.signup(formPost(creds.apiId, creds.apiSecret, secure, signupFields()), {
          contentType: 'form',
        });
        expect(result).toMatchObject({ statusCode: 422, resultCode: '4220' });
        expect((errorsOf(result) as { attribute: string }[]).map((e) => e.attribute)).toEqual(['timestamp', 'nonce']);
        expect(verifyDirectRedirect(result.redirect!, creds).ok).toBe(true);
        const forty = await direct.signup(
          formPost(creds.apiId, creds.apiSecret, { timestamp: '17', nonce: 'x'.repeat(40), data }, signupFields()),
          { contentType: 'form' },
        );
        expect(forty.resultCode).toBe('2000');
        expect(await acme.subscriptions.list()).toHaveLength(1);
      });

      it('answers a declined card with 4300 and creates nothing', async () => {
        const f = fixture();
        const { acme, direct, creds, signedSignup } = await setup(f);
        const result = await direct.signup(
          signedSignup(signupFields({ 'signup[payment_profile][card_number]': '2' })),
          {
            contentType: 'form',
          },
        );
        expect(result).toMatchObject({ statusCode: 422, resultCode: '4300' });
        expect(verifyDirectRedirect(result.redirect!, creds)).toMatchObject({
          ok: true,
          success: false,
          resultCode: '4300',
        });
        expect(await acme.subscriptions.list()).toHaveLength(0);
        expect(await acme.customers.list()).toHaveLength(0);
      });

      it('reports validation errors with attributes in the form wording', async () => {
        const f = fixture();
        const { direct, signedSignup } = await setup(f);
        const noCustomer = await direct.signup(
          signedSignup(
            signupFields({}, [
              'signup[customer][first_name]',
              'signup[customer][last_name]',
              'signup[customer][email]',
            ]),
          ),
          { contentType: 'form' },
        );
        expect(noCustomer.resultCode).toBe('4220');
        expect(errorsOf(noCustomer)).toEqual([
          { attribute: 'customer', message: 'A Customer must be specified for the subscription to be valid.' },
        ]);
        const noMonth = await direct.signup(
          signedSignup(signupFields({}, ['signup[payment_profile][expiration_month]'])),
          {
            contentType: 'form',
          },
        );
        expect(errorsOf(noMonth)).toEqual([
          { attribute: 'payment_profile.expiration_month', message: 'Credit card expiration month: cannot be blank.' },
        ]);
        const noProduct = await direct.signup(
          signedSignup(signupFields(), { signup: { product: { handle: 'gold' } } }),
          {
            contentType: 'form',
          },
        );
        expect(errorsOf(noProduct)).toEqual([
          { attribute: 'product.handle', message: "Product with API Handle 'gold' does not exist for this site." },
        ]);
      });

      it('refuses a post without any redirect_uri with 4220, answered without a redirect', async () => {
        const f = fixture();
        const { acme, direct, creds } = await setup(f);
        const form = formPost(
          creds.apiId,
          creds.apiSecret,
          { nonce: 'n', data: { signup: { product: { handle: 'pro' } } } },
          signupFields(),
        );
        const result = await direct.signup(form, { contentType: 'form' });
        expect(result).toMatchObject({ statusCode: 422, resultCode: '4220' });
        expect(result.redirect).toBeUndefined();
        expect((errorsOf(result) as { attribute: string }[])[0]!.attribute).toBe('redirect_uri');
        const script = formPost(
          creds.apiId,
          creds.apiSecret,
          { data: { redirect_uri: 'javascript:alert(1)' } },
          signupFields(),
        );
        expect((await direct.signup(script, { contentType: 'form' })).redirect).toBeUndefined();
        expect(await acme.subscriptions.list()).toHaveLength(0);
      });

      it('adds components in the map and list forms, with signed components replacing the form ones', async () => {
        const f = fixture();
        const { acme, family, direct, signedSignup, openSignup } = await setup(f);
        const seats = await acme.components.create(family.id, {
          name: 'Seats',
          kind: 'quantity_based',
          unitName: 'seat',
          handle: 'seats',
          unitPrice: '2',
        });
        const id = seats.component.id;
        const charged = () => [...f.gateway.charges.values()].map((c) => c.amountInCents);
        // Unsigned components are read only from a form that signs nothing of the bill.
        const map = await direct.signup(openSignup([...signupFields(), [`signup[components][${id}]`, '3']]), {
          contentType: 'form',
        });
        expect(map.resultCode).toBe('2000');
        expect(charged()).toEqual([1600]);
        const list = await direct.signup(
          openSignup([
            ...signupFields({ 'signup[customer][email]': 'list@example.com' }),
            ['signup[components][][component_id]', 'handle:seats'],
            ['signup[components][][quantity]', '2'],
          ]),
          { contentType: 'form' },
        );
        expect(list.resultCode).toBe('2000');
        expect(charged()).toEqual([1600, 1400]);
        // The signed quantity wins over a form field naming the same component.
        const data = { signup: { product: { handle: 'pro' }, components: { [String(id)]: '1' } } };
        const signed = await direct.signup(
          signedSignup(
            [...signupFields({ 'signup[customer][email]': 's@example.com' }), [`signup[components][${id}]`, '9']],
            data,
          ),
          { contentType: 'form' },
        );
        expect(signed.resultCode).toBe('2000');
        expect(charged()).toEqual([1600, 1400, 1200]);
        const unknown = await direct.signup(
          openSignup([
            ...signupFields({ 'signup[customer][email]': 'u@example.com' }),
            ['signup[components][999]', '1'],
          ]),
          { contentType: 'form' },
        );
        expect(unknown.resultCode).toBe('4220');
        expect(errorsOf(unknown)).toEqual([
          { attribute: 'components[0].component_id', message: "Component: '999' does not exist." },
        ]);
        expect(await acme.subscriptions.list()).toHaveLength(3);
      });

      it('applies a coupon, and reads an offer (an unknown one is refused)', async () => {
        const f = fixture();
        const { acme, family, direct, openSignup, signedSignup } = await setup(f);
        await acme.coupons.create({ name: 'Ten', code: 'TEN', percentage: '10', productFamilyId: family.id });
        const coupon = await direct.signup(openSignup([...signupFields(), ['signup[coupon_code]', 'ten']]), {
          contentType: 'form',
        });
        expect(coupon.resultCode).toBe('2000');
        const [view] = await acme.subscriptions.list();
        expect(view!.subscription.couponCodes).toEqual(['TEN']);
        expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([900]);
        const offer = await direct.signup(openSignup([...signupFields(), ['signup[offer_id]', '3']]), {
          contentType: 'form',
        });
        expect(errorsOf(offer)).toEqual([
          { attribute: 'offer_id', message: "Offer: '3' does not exist for this site." },
        ]);
        // A signed coupon is applied whatever the form says.
        const signed = await direct.signup(
          signedSignup(signupFields({ 'signup[customer][email]': 's@example.com' }), {
            signup: { product: { handle: 'pro' }, coupon_code: 'TEN' },
          }),
          { contentType: 'form' },
        );
        expect(signed.resultCode).toBe('2000');
        expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([900, 900]);
        // An offer by handle: its product and coupon, as if given.
        const pro = await acme.catalog.getProduct('pro');
        await acme.offers.create({ name: 'Pro', handle: 'pro-offer', productId: pro.product.id, coupons: ['TEN'] });
        const viaOffer = await direct.signup(
          signedSignup(
            [['signup[offer_id]', 'handle:pro-offer'], ...signupFields({ 'signup[customer][email]': 'o@example.com' })],
            {},
          ),
          { contentType: 'form' },
        );
        expect(viaOffer.resultCode).toBe('2000');
        expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([900, 900, 900]);
      });

      it('answers a JSON signup with HTTP Basic with the call JSON and no redirect', async () => {
        const f = fixture();
        const { acme, family, direct, creds, site } = await setup(f);
        await acme.components.create(family.id, {
          name: 'Seats',
          kind: 'quantity_based',
          unitName: 'seat',
          handle: 'seats',
          unitPrice: '2',
        });
        const params = formParamsFromJson({
          signup: {
            product: { handle: 'pro' },
            components: [{ component_id: 'handle:seats', quantity: 4 }],
            customer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
            payment_profile: { card_number: '1', expiration_month: 12, expiration_year: 2030 },
          },
        });
        const basic = { apiId: creds.apiId, password: creds.apiPassword };
        const result = await direct.signup({ params }, { contentType: 'json', basic });
        expect(result.redirect).toBeUndefined();
        expect(result.resultCode).toBe('2000');
        const body = result.call.response as { result: unknown; signup: { subscription: { id: number } } };
        const [view] = await acme.subscriptions.list();
        expect(body.signup.subscription.id).toBe(view!.subscription.id);
        expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([1800]);
        const wrong = await direct.signup({ params }, { contentType: 'json', basic: { ...basic, password: 'nope' } });
        expect(wrong).toMatchObject({ statusCode: 401, resultCode: '4001' });
        expect(await storedCall(f, site.id, wrong.call.id)).toMatchObject({ success: false });
        expect(await acme.subscriptions.list()).toHaveLength(1);
        expect((await rejection(direct.signup({ params }, { contentType: 'json' }))).code).toBe('unauthorized');
        const stranger = { apiId: 'nobody', password: creds.apiPassword };
        expect((await rejection(direct.signup({ params }, { contentType: 'json', basic: stranger }))).code).toBe(
          'unauthorized',
        );
      });
    });

    describe('card update', () => {
      async function withSubscription(f: EngineFixture) {
        const ctx = await setup(f);
        const signed = await ctx.direct.signup(ctx.signedSignup(), { contentType: 'form' });
        const id = (signed.call.response as { signup: { subscription: { id: number } } }).signup.subscription.id;
        return { ...ctx, id };
      }
      const cardFields = (number = '5555555555554444'): Pairs => [
        ['payment_profile[card_number]', number],
        ['payment_profile[expiration_month]', '1'],
        ['payment_profile[expiration_year]', '2031'],
        ['payment_profile[billing_zip]', '10001'],
      ];

      it('answers a card update without a nonce with 4011 and changes nothing', async () => {
        const f = fixture();
        const { acme, direct, creds, id } = await withSubscription(f);
        const data = { redirect_uri: RETURN, subscription_id: id };
        const result = await direct.cardUpdate(
          String(id),
          formPost(creds.apiId, creds.apiSecret, { timestamp: '1768478400', data }, cardFields()),
        );
        expect(result).toMatchObject({ statusCode: 401, resultCode: '4011' });
        expect(verifyDirectRedirect(result.redirect!, creds)).toMatchObject({
          ok: true,
          resultCode: '4011',
          nonce: '',
        });
        expect((await acme.subscriptions.get(id)).paymentProfile?.lastFour).toBe('1111');
      });

      it('replaces the card of the signed subscription and records the call without card data', async () => {
        const f = fixture();
        const { acme, direct, creds, site, id } = await withSubscription(f);
        const data = { redirect_uri: RETURN, subscription_id: id };
        const form = formPost(
          creds.apiId,
          creds.apiSecret,
          { timestamp: '1768478400', nonce: 'cu-1', data },
          cardFields(),
        );
        const result = await direct.cardUpdate(String(id), form);
        expect(result.resultCode).toBe('2000');
        expect(verifyDirectRedirect(result.redirect!, creds)).toMatchObject({
          ok: true,
          success: true,
          callId: result.call.id,
        });
        const view = await acme.subscriptions.get(id);
        expect(view.paymentProfile).toMatchObject({ lastFour: '4444', expirationMonth: 1, expirationYear: 2031 });
        expect(view.paymentProfile!.billingAddress.zip).toBe('10001');
        const stored = await storedCall(f, site.id, result.call.id);
        expect(JSON.stringify(stored)).not.toContain('5555555555554444');
        expect(
          (stored!.response as { payment_profile: { masked_card_number: string } }).payment_profile.masked_card_number,
        ).toBe('XXXX-XXXX-XXXX-4444');
        const replay = await direct.cardUpdate(String(id), form);
        expect(replay.resultCode).toBe('4221');
      });

      it('refuses a subscription id that is missing from, or differs from, the signed data', async () => {
        const f = fixture();
        const { acme, direct, creds, id } = await withSubscription(f);
        const missing = await direct.cardUpdate(
          String(id),
          formPost(creds.apiId, creds.apiSecret, { nonce: 'a', data: { redirect_uri: RETURN } }, cardFields()),
        );
        expect(missing.resultCode).toBe('4220');
        expect((errorsOf(missing) as { attribute: string }[])[0]!.attribute).toBe('subscription_id');
        const other = await direct.cardUpdate(
          String(id),
          formPost(
            creds.apiId,
            creds.apiSecret,
            { nonce: 'b', data: { redirect_uri: RETURN, subscription_id: id + 1 } },
            cardFields(),
          ),
        );
        expect(other.resultCode).toBe('4001');
        // A normal field cannot supply the id either: only secure data counts.
        const unsigned = await direct.cardUpdate(
          String(id),
          formPost(creds.apiId, creds.apiSecret, { nonce: 'c', data: { redirect_uri: RETURN } }, [
            ...cardFields(),
            ['subscription_id', String(id)],
          ]),
        );
        expect(unsigned.resultCode).toBe('4220');
        expect((await acme.subscriptions.get(id)).paymentProfile?.lastFour).toBe('1111');
      });

      it("answers 4040 for a subscription that does not exist or is another site's", async () => {
        const f = fixture();
        const { direct, creds, otherCreds, id } = await withSubscription(f);
        const unknown = await direct.cardUpdate(
          '999',
          formPost(
            creds.apiId,
            creds.apiSecret,
            { nonce: 'a', data: { redirect_uri: RETURN, subscription_id: 999 } },
            cardFields(),
          ),
        );
        expect(unknown).toMatchObject({ statusCode: 404, resultCode: '4040' });
        const foreign = await direct.cardUpdate(
          String(id),
          formPost(
            otherCreds.apiId,
            otherCreds.apiSecret,
            { nonce: 'a', data: { redirect_uri: RETURN, subscription_id: id } },
            cardFields(),
          ),
        );
        expect(foreign.resultCode).toBe('4040');
      });

      it('answers an invalid card number with 4220 on payment_profile.card_number', async () => {
        const f = fixture();
        const { direct, creds, id } = await withSubscription(f);
        const result = await direct.cardUpdate(
          String(id),
          formPost(
            creds.apiId,
            creds.apiSecret,
            { nonce: 'a', data: { redirect_uri: RETURN, subscription_id: id } },
            cardFields('1234'),
          ),
        );
        expect(result.resultCode).toBe('4220');
        expect(errorsOf(result)).toEqual([
          { attribute: 'payment_profile.card_number', message: 'Credit card number: is invalid.' },
        ]);
      });
    });

    describe('call records', () => {
      it('reads a call with the direct credentials of its site only', async () => {
        const f = fixture();
        const { direct, creds, otherCreds, signedSignup } = await setup(f);
        const result = await direct.signup(signedSignup(), { contentType: 'form' });
        const call = await direct.readCall(creds.apiId, creds.apiPassword, result.call.id);
        expect(call).toEqual(result.call);
        expect((await rejection(direct.readCall(creds.apiId, 'wrong', result.call.id))).code).toBe('unauthorized');
        expect((await rejection(direct.readCall('nobody', creds.apiPassword, result.call.id))).code).toBe(
          'unauthorized',
        );
        expect((await rejection(direct.readCall(otherCreds.apiId, otherCreds.apiPassword, result.call.id))).code).toBe(
          'not_found',
        );
        expect((await rejection(direct.readCall(creds.apiId, creds.apiPassword, 'not-a-call'))).code).toBe('not_found');
      });

      it("writes the call as the service's JSON with an integer timestamp", async () => {
        const f = fixture();
        const { direct, creds } = await setup(f);
        const data = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const result = await direct.signup(
          formPost(creds.apiId, creds.apiSecret, { timestamp: '1768478400', nonce: 'n', data }, signupFields()),
          {
            contentType: 'form',
          },
        );
        const json = directCallJson(result.call).call;
        expect(json).toMatchObject({
          id: result.call.id,
          api_id: creds.apiId,
          timestamp: 1768478400,
          nonce: 'n',
          success: true,
        });
        expect(json.request).toMatchObject({ secure: { api_id: creds.apiId, timestamp: '1768478400', nonce: 'n' } });
      });
    });

    describe('security', () => {
      it('refuses unsigned fields that would change a signed bill with a signed 4220, and charges and creates nothing', async () => {
        const f = fixture();
        const { acme, family, direct, creds, signedSignup, basicId } = await setup(f);
        await acme.coupons.create({ name: 'Half', code: 'HALF', percentage: '50', productFamilyId: family.id });
        const seats = await acme.components.create(family.id, {
          name: 'Seats',
          kind: 'quantity_based',
          unitName: 'seat',
          handle: 'seats',
          unitPrice: '2',
        });
        const existing = await acme.customers.create({
          firstName: 'Old',
          lastName: 'Customer',
          email: 'old@example.com',
        });
        // Each of these, posted beside a form whose secure data signs `signup[product][handle]=pro`,
        // would change what is billed or when (a cheaper product, someone else's customer record, a
        // coupon, components, a billing date far away) or whom; none is something a customer types.
        const attacks: [string, string, string][] = [
          ['signup[product][id]', String(basicId), 'product.id'],
          ['signup[customer][id]', String(existing.id), 'customer.id'],
          ['signup[subscription][next_billing_at]', '2099-01-01', 'subscription.next_billing_at'],
          ['signup[subscription][snap_day]', '1', 'subscription.snap_day'],
          ['signup[coupon_code]', 'HALF', 'coupon_code'],
          ['signup[coupon_codes][]', 'HALF', 'coupon_codes'],
          [`signup[components][${seats.component.id}]`, '5', 'components'],
          ['signup[customer][reference]', 'someone-else', 'customer.reference'],
          ['signup[metafields][plan]', 'gold', 'metafields.plan'],
          ['signup[payment_profile][payment_type]', 'bank_account', 'payment_profile.payment_type'],
        ];
        for (const [name, value, attribute] of attacks) {
          const result = await direct.signup(signedSignup([...signupFields(), [name, value]]), { contentType: 'form' });
          expect(result, name).toMatchObject({ statusCode: 422, resultCode: '4220' });
          expect(verifyDirectRedirect(result.redirect!, creds), name).toMatchObject({
            ok: true,
            success: false,
            resultCode: '4220',
            callId: result.call.id,
          });
          expect(errorsOf(result), name).toEqual([
            { attribute, message: expect.stringContaining('cannot be sent unsigned') },
          ]);
        }
        expect(await acme.subscriptions.list()).toHaveLength(0);
        expect(await acme.customers.list()).toHaveLength(1);
        expect(f.gateway.chargeCalls).toBe(0);
        // What the customer types is still theirs to send: names, contact, address, card, billing address.
        const typed = await direct.signup(
          signedSignup([
            ...signupFields(),
            ['signup[customer][organization]', 'Analytical Engines'],
            ['signup[customer][phone]', '555-0100'],
            ['signup[customer][address]', '1 Engine Way'],
            ['signup[customer][city]', 'London'],
            ['signup[customer][zip]', 'N1'],
            ['signup[customer][country]', 'GB'],
            ['signup[payment_profile][billing_zip]', 'N1'],
          ]),
          { contentType: 'form' },
        );
        expect(typed.resultCode).toBe('2000');
        const [view] = await acme.subscriptions.list();
        expect(view!.product.product.handle).toBe('pro');
        expect(view!.customer.organization).toBe('Analytical Engines');
        expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([1000]);
      });

      it('names every refused field in one answer, and still lets secure data override a normal field of the same name', async () => {
        const f = fixture();
        const { acme, direct, signedSignup, basicId } = await setup(f);
        const result = await direct.signup(
          signedSignup([
            ...signupFields(),
            ['signup[product][handle]', 'basic'],
            ['signup[product][id]', String(basicId)],
            ['signup[customer][id]', '1'],
          ]),
          { contentType: 'form' },
        );
        expect(result.resultCode).toBe('4220');
        // The handle is overridden by the signed one (spec §4 rule 3), so only the id fields are refused.
        expect((errorsOf(result) as { attribute: string }[]).map((e) => e.attribute).sort()).toEqual([
          'customer.id',
          'product.id',
        ]);
        expect(await acme.subscriptions.list()).toHaveLength(0);
      });

      it('lets a form whose secure data signs nothing of the bill choose the product and coupon in normal fields (spec §4)', async () => {
        const f = fixture();
        const { acme, family, direct, signedSignup } = await setup(f);
        await acme.coupons.create({ name: 'Half', code: 'HALF', percentage: '50', productFamilyId: family.id });
        // Signing a customer-typed field (a pre-filled email) does not sign the bill either.
        const result = await direct.signup(
          signedSignup([...signupFields(), ['signup[product][handle]', 'basic'], ['signup[coupon_code]', 'HALF']], {
            signup: { customer: { email: 'ada@example.com' } },
          }),
          { contentType: 'form' },
        );
        expect(result.resultCode).toBe('2000');
        const [view] = await acme.subscriptions.list();
        expect(view!.product.product.handle).toBe('basic');
        expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([250]);
      });

      it('refuses as a duplicate (4221) a post whose signed parts were shifted against each other', async () => {
        const f = fixture();
        const { acme, direct, creds } = await setup(f);
        // The signature covers api_id + timestamp + nonce + data with no separators.
        const data = encodeSecureData({ ref: '1', redirect_uri: RETURN, signup: { product: { handle: 'pro' } } });
        const signature = directRequestSignature(
          { apiId: creds.apiId, timestamp: '1768478400', nonce: '7n-1', data },
          creds.apiSecret,
        );
        const post = (secure: Omit<SecureParts, 'signature'>) =>
          direct.signup(formPost(creds.apiId, creds.apiSecret, { ...secure, signature }, signupFields()), {
            contentType: 'form',
          });
        const first = await post({ timestamp: '1768478400', nonce: '7n-1', rawData: data });
        expect(first.resultCode).toBe('2000');
        const shifted: Omit<SecureParts, 'signature'>[] = [
          // A digit of the nonce moved to the end of the timestamp: another (timestamp, nonce) pair.
          { timestamp: '17684784007', nonce: 'n-1', rawData: data },
          // The timestamp moved into the nonce: no timestamp, so no (timestamp, nonce) check at all.
          { nonce: '17684784007n-1', rawData: data },
          // The nonce's end moved into the data (its first key becomes `1ref`, which nothing reads).
          { timestamp: '1768478400', nonce: '7n-', rawData: `1${data}` },
          // The whole nonce moved into the data: no nonce, so no (timestamp, nonce) check at all.
          { timestamp: '1768478400', rawData: `7n-1${data}` },
        ];
        for (const secure of shifted) {
          const again = await post(secure);
          expect(again, JSON.stringify(secure)).toMatchObject({ statusCode: 409, resultCode: '4221' });
          expect(verifyDirectRedirect(again.redirect!, creds)).toMatchObject({ ok: true, resultCode: '4221' });
        }
        expect(await acme.subscriptions.list()).toHaveLength(1);
        expect(f.gateway.chargeCalls).toBe(1);
      });

      it('lets exactly one of a post and its shifted copy through when they race', async () => {
        const f = fixture();
        const { acme, direct, creds } = await setup(f);
        const data = encodeSecureData({ redirect_uri: RETURN, signup: { product: { handle: 'pro' } } });
        const signature = directRequestSignature(
          { apiId: creds.apiId, timestamp: '1768478400', nonce: '9race', data },
          creds.apiSecret,
        );
        const post = (timestamp: string, nonce: string) =>
          direct.signup(
            formPost(creds.apiId, creds.apiSecret, { timestamp, nonce, rawData: data, signature }, signupFields()),
            { contentType: 'form' },
          );
        const results = await Promise.all([post('1768478400', '9race'), post('17684784009', 'race')]);
        expect(results.map((r) => r.resultCode).sort()).toEqual(['2000', '4221']);
        expect(await acme.subscriptions.list()).toHaveLength(1);
      });

      it('keeps only a bounded summary of a refused post: field names, never values', async () => {
        const f = fixture();
        const { acme, direct, creds, site, signedSignup } = await setup(f);
        const junk: Pairs = Array.from({ length: 200 }, (_, i) => [
          `junk[k${i}]`,
          `secret-value-${i}-${'x'.repeat(300)}`,
        ]);
        const data = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const forged = await direct.signup(
          formPost(
            creds.apiId,
            creds.apiSecret,
            { timestamp: '1768478400', nonce: 'n'.repeat(500), data, signature: '0'.repeat(40) },
            [...signupFields(), ['signup[customer][notes]', 'z'.repeat(100_000)], ...junk],
          ),
          { contentType: 'form' },
        );
        expect(forged.resultCode).toBe('4001');
        const stored = await storedCall(f, site.id, forged.call.id);
        const text = JSON.stringify(stored);
        expect(text.length).toBeLessThan(8_000);
        expect(text).not.toContain('secret-value');
        expect(text).not.toContain('zzzz');
        expect(text).not.toContain(VISA);
        expect(text).not.toContain('Lovelace');
        const request = stored!.request as {
          summary: boolean;
          secure: Record<string, string>;
          fields: string[];
          field_count: number;
        };
        expect(request.summary).toBe(true);
        expect(request.secure.api_id).toBe(creds.apiId);
        expect(request.secure.timestamp).toBe('1768478400');
        expect(request.secure.nonce!.length).toBeLessThanOrEqual(65);
        expect(request.fields.slice(0, 5)).toEqual([
          'secure[api_id]',
          'secure[timestamp]',
          'secure[nonce]',
          'secure[data]',
          'secure[signature]',
        ]);
        expect(request.fields).toContain('signup[payment_profile][card_number]');
        expect(request.fields).toHaveLength(50);
        expect(request.field_count).toBe(5 + 9 + 1 + 200);
        expect(stored!.nonce!.length).toBeLessThanOrEqual(65);
        // A replay is refused before it is admitted too: a summary, not the request again.
        const form = signedSignup();
        expect((await direct.signup(form, { contentType: 'form' })).resultCode).toBe('2000');
        const replay = await direct.signup(form, { contentType: 'form' });
        expect(replay.resultCode).toBe('4221');
        expect((await storedCall(f, site.id, replay.call.id))!.request).toMatchObject({ summary: true });
        // An admitted post that fails keeps its request (card fields blanked), to pre-fill the form again.
        const declined = await direct.signup(
          signedSignup(signupFields({ 'signup[payment_profile][card_number]': '2' })),
          { contentType: 'form' },
        );
        expect(declined.resultCode).toBe('4300');
        expect((await storedCall(f, site.id, declined.call.id))!.request).toMatchObject({
          signup: { customer: { email: 'ada@example.com' }, payment_profile: { card_number: '' } },
        });
        expect(await acme.subscriptions.list()).toHaveLength(1);
      });

      it('blanks card fields in the stored call at any depth, in list form and in any case', async () => {
        const f = fixture();
        const { direct, site, signedSignup, openSignup } = await setup(f);
        // Not digits: a stored signature or token (hex, base64) could hold any short digit run by chance.
        const CVV_SENTINEL = 'cvv-sentinel-zq';
        const cards = ['5555555555554444', '4012888888881881', '378282246310005', '6011111111111117'];
        const signed = await direct.signup(
          signedSignup(signupFields(), {
            signup: {
              product: { handle: 'pro' },
              extra: {
                card_number: [cards[0]!],
                Full_Number: cards[1]!,
                CVV: CVV_SENTINEL,
                nested: [{ 'card-number': cards[2]! }],
                deep: { a: { b: { cardNumber: cards[3]! } } },
              },
            },
          }),
          { contentType: 'form' },
        );
        expect(signed.resultCode).toBe('2000');
        const open = await direct.signup(
          openSignup([
            ...signupFields({ 'signup[customer][email]': 'open@example.com' }),
            ['signup[payment_profile][Card_Number]', cards[1]!],
            ['signup[extra][full_number][]', cards[2]!],
            ['signup[extra][x][][CVV]', CVV_SENTINEL],
          ]),
          { contentType: 'form' },
        );
        expect(open.resultCode).toBe('2000');
        for (const id of [signed.call.id, open.call.id]) {
          const text = JSON.stringify(await storedCall(f, site.id, id));
          for (const card of [VISA, ...cards]) expect(text).not.toContain(card);
          expect(text).not.toContain(CVV_SENTINEL);
        }
        const request = (await storedCall(f, site.id, signed.call.id))!.request as { secure: { data: string } };
        expect(request.secure.data).toContain('signup[extra][card_number][]=&');
        expect(request.secure.data).toContain('signup[product][handle]=pro');
      });

      it('refuses a NUL or a lone surrogate with a signed 4220 before anything is charged, and stores the call', async () => {
        const f = fixture();
        const { acme, direct, creds, site, signedSignup } = await setup(f);
        const nulName = await direct.signup(
          signedSignup(signupFields({ 'signup[customer][first_name]': 'A\u0000da' })),
          { contentType: 'form' },
        );
        expect(nulName).toMatchObject({ statusCode: 422, resultCode: '4220' });
        expect(verifyDirectRedirect(nulName.redirect!, creds)).toMatchObject({ ok: true, resultCode: '4220' });
        expect(errorsOf(nulName)).toEqual([
          { attribute: 'base', message: 'Request: contains a NUL character or text that is not valid Unicode.' },
        ]);
        const stored = await storedCall(f, site.id, nulName.call.id);
        expect(JSON.stringify(stored)).not.toContain('\\u0000');
        // A NUL in the signed nonce: refused, reflected as sent, stored without it.
        const data = { redirect_uri: RETURN, signup: { product: { handle: 'pro' } } };
        const nulNonce = await direct.signup(
          formPost(creds.apiId, creds.apiSecret, { timestamp: '1768478400', nonce: 'n\u00001', data }, signupFields()),
          { contentType: 'form' },
        );
        expect(nulNonce.resultCode).toBe('4220');
        expect(verifyDirectRedirect(nulNonce.redirect!, creds)).toMatchObject({ ok: true, nonce: 'n\u00001' });
        expect((await storedCall(f, site.id, nulNonce.call.id))!.nonce).toBe('n\uFFFD1');
        // A NUL in signed secure data.
        const nulData = await direct.signup(
          formPost(
            creds.apiId,
            creds.apiSecret,
            { nonce: 'n-2', data: { ...data, signup: { product: { handle: 'pro\u0000' } } } },
            signupFields(),
          ),
          { contentType: 'form' },
        );
        expect(nulData.resultCode).toBe('4220');
        // A lone surrogate, which only JSON can carry.
        const params = formParamsFromJson({
          signup: {
            product: { handle: 'pro' },
            customer: { first_name: '\ud800', last_name: 'Lovelace', email: 'ada@example.com' },
            payment_profile: { card_number: '1', expiration_month: 12, expiration_year: 2030 },
          },
        });
        const basic = { apiId: creds.apiId, password: creds.apiPassword };
        const surrogate = await direct.signup({ params }, { contentType: 'json', basic });
        expect(surrogate).toMatchObject({ statusCode: 422, resultCode: '4220' });
        expect(JSON.stringify(await storedCall(f, site.id, surrogate.call.id))).not.toMatch(/\\ud800/i);
        // No credential can hold a NUL: unauthorized, no call, no database error.
        const nulApiId = formPost(`${creds.apiId}\u0000`, creds.apiSecret, { data }, signupFields());
        expect((await rejection(direct.signup(nulApiId, { contentType: 'form' }))).code).toBe('unauthorized');
        expect(
          (await rejection(direct.readCall(`${creds.apiId}\u0000`, creds.apiPassword, nulName.call.id))).code,
        ).toBe('unauthorized');
        expect(await acme.subscriptions.list()).toHaveLength(0);
        expect(await acme.customers.list()).toHaveLength(0);
        expect(f.gateway.chargeCalls).toBe(0);
      });

      it('refuses a NUL in a card update path before anything is changed', async () => {
        const f = fixture();
        const { acme, direct, creds, signedSignup } = await setup(f);
        const signed = await direct.signup(signedSignup(), { contentType: 'form' });
        const id = (signed.call.response as { signup: { subscription: { id: number } } }).signup.subscription.id;
        const result = await direct.cardUpdate(
          `${id}\u0000`,
          formPost(
            creds.apiId,
            creds.apiSecret,
            { nonce: 'cu', data: { redirect_uri: RETURN, subscription_id: `${id}\u0000` } },
            [
              ['payment_profile[card_number]', '5555555555554444'],
              ['payment_profile[expiration_month]', '1'],
              ['payment_profile[expiration_year]', '2031'],
            ],
          ),
        );
        expect(result.resultCode).toBe('4220');
        expect((await acme.subscriptions.get(id)).paymentProfile?.lastFour).toBe('1111');
      });

      it('refuses a form with more fields than the parser reads, so that no field past them takes effect', async () => {
        const f = fixture();
        const { acme, family, direct, signedSignup } = await setup(f);
        const seats = await acme.components.create(family.id, {
          name: 'Seats',
          kind: 'quantity_based',
          unitName: 'seat',
          handle: 'seats',
          unitPrice: '2',
        });
        const form = signedSignup();
        const padded = parseDirectForm(
          `${form.rawBody}${'&'.repeat(1000)}&${encodeURIComponent(`signup[components][${seats.component.id}]`)}=50`,
        );
        const result = await direct.signup(padded, { contentType: 'form' });
        expect(result.resultCode).toBe('4220');
        expect(errorsOf(result)).toEqual([{ attribute: 'base', message: 'Request: has more than 1000 fields.' }]);
        expect(await acme.subscriptions.list()).toHaveLength(0);
        expect(f.gateway.chargeCalls).toBe(0);
      });
    });
  });
}
