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
  /** Replaces the computed signature. */
  readonly signature?: string;
}

/** A form body exactly as a browser would post it (brackets percent-encoded), read the way the binding reads it. */
function formPost(apiId: string, apiSecret: string, secure: SecureParts, fields: Pairs): DirectPostForm {
  const data = secure.data === undefined ? undefined : encodeSecureData(secure.data);
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
  await acme.catalog.createProduct(family.id, {
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
  return { acme, family, direct, creds, otherCreds: other.direct, site: created.site, signedSignup };
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
        const { acme, family, direct, signedSignup } = await setup(f);
        const seats = await acme.components.create(family.id, {
          name: 'Seats',
          kind: 'quantity_based',
          unitName: 'seat',
          handle: 'seats',
          unitPrice: '2',
        });
        const id = seats.component.id;
        const charged = () => [...f.gateway.charges.values()].map((c) => c.amountInCents);
        const map = await direct.signup(signedSignup([...signupFields(), [`signup[components][${id}]`, '3']]), {
          contentType: 'form',
        });
        expect(map.resultCode).toBe('2000');
        expect(charged()).toEqual([1600]);
        const list = await direct.signup(
          signedSignup([
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
          signedSignup([
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

      it('applies a coupon and refuses an offer rather than ignoring it', async () => {
        const f = fixture();
        const { acme, family, direct, signedSignup } = await setup(f);
        await acme.coupons.create({ name: 'Ten', code: 'TEN', percentage: '10', productFamilyId: family.id });
        const coupon = await direct.signup(signedSignup([...signupFields(), ['signup[coupon_code]', 'ten']]), {
          contentType: 'form',
        });
        expect(coupon.resultCode).toBe('2000');
        const [view] = await acme.subscriptions.list();
        expect(view!.subscription.couponCodes).toEqual(['TEN']);
        expect([...f.gateway.charges.values()].map((c) => c.amountInCents)).toEqual([900]);
        const offer = await direct.signup(signedSignup([...signupFields(), ['signup[offer_id]', '3']]), {
          contentType: 'form',
        });
        expect(errorsOf(offer)).toEqual([
          { attribute: 'offer_id', message: 'Offer: is not supported by this server yet.' },
        ]);
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
  });
}
