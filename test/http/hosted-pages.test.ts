import { createHmac } from 'node:crypto';
import type { SubscriptionView } from 'billing-engine';
import { hostedPageToken, wireTimestamp } from 'billing-engine/chargify';
import { describe, expect, it } from 'vitest';
import { directRequestSignature } from '../../src/domain/signing/index.js';
import {
  checkPortalLink,
  createPortalLink,
  DEFAULT_PORTAL_LINK_LIFETIME_SECONDS,
  portalLinkSignature,
  verifyPortalLink,
} from '../../src/portal-link.js';
import type { HttpReply } from './support/client.js';
import { type HostedFixture, hiddenFields, useHostedFixture } from './support/hosted-fixture.js';
import { START } from './support/http-fixture.js';

const CARD_FORM = {
  first_name: 'Grace',
  last_name: 'Hopper',
  full_number: '4242424242424242',
  expiration_month: '10',
  expiration_year: '2031',
  cvv: '321',
};

/** Gives the site a known shared key (the reference's vectors use fixed keys; real keys are random). */
async function setSharedKey(f: HostedFixture, subdomain: string, sharedKey: string): Promise<void> {
  await f.engine.storage.transaction(async (tx) => {
    const site = await tx.sites.findBySubdomain(subdomain);
    if (site === undefined) throw new Error(`no site ${subdomain}`);
    const updated = await tx.sites.updateAtVersion(site.id, site.version, { sharedKey });
    if (updated === undefined) throw new Error('site changed concurrently');
  });
}

/** Signs subscriptions up on `site` until one gets id `id` (ids are assigned in order), and returns it. */
async function subscriptionWithId(
  f: HostedFixture,
  site: 'acme' | 'globex',
  id: number,
  product = 'pro',
): Promise<SubscriptionView> {
  for (;;) {
    const view = await f.subscribe(site, product, `customer-${id}@example.com`);
    if (view.subscription.id === id) return view;
    if (view.subscription.id > id) throw new Error(`subscription ids passed ${id}`);
  }
}

async function sharedKeyOf(f: HostedFixture, site: 'acme' | 'globex'): Promise<string> {
  return (await f.engine.site(site).info()).sharedKey;
}

function cardUpdatePath(id: number | string, token: string): string {
  return `/update_payment/${id}/${token}`;
}

async function validCardPath(f: HostedFixture, view: SubscriptionView, site: 'acme' | 'globex' = 'acme') {
  return cardUpdatePath(
    view.subscription.id,
    hostedPageToken('update_payment', view.subscription.id, await sharedKeyOf(f, site)),
  );
}

function expectHtml(reply: HttpReply, status: number): void {
  expect(reply.status, reply.text.slice(0, 500)).toBe(status);
  expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
}

describe('portal links (src/portal-link.ts)', () => {
  const KEY = 'sharedKEY_9';
  const NOW = new Date('2026-01-15T12:00:00Z');

  it('signs portal--{customer}--{expires} with HMAC-SHA256 of the shared key, truncated to 32 hex', () => {
    const expected = createHmac('sha256', KEY).update('portal--42--1700000000').digest('hex').slice(0, 32);
    expect(portalLinkSignature(42, 1700000000, KEY)).toBe(expected);
    expect(portalLinkSignature('42', '1700000000', KEY)).toBe(expected);
    // A constructed vector pinned as a literal, so that a change of the algorithm cannot go unnoticed.
    expect(portalLinkSignature(42, 1700000000, KEY)).toBe('a1ade5ca23eaed537ad5ddcbd74a36ae');
    expect(portalLinkSignature(43, 1700000000, KEY)).not.toBe(expected);
    expect(portalLinkSignature(42, 1700000001, KEY)).not.toBe(expected);
    expect(portalLinkSignature(42, 1700000000, 'other')).not.toBe(expected);
  });

  it('issues links that last 65 days by default, or the lifetime asked for', () => {
    const link = createPortalLink({ customerId: 7, sharedKey: KEY, now: NOW });
    const expires = Math.floor(NOW.getTime() / 1000) + 65 * 86_400;
    expect(DEFAULT_PORTAL_LINK_LIFETIME_SECONDS).toBe(65 * 86_400);
    expect(link).toEqual({
      path: `/portal/7/${expires}/${portalLinkSignature(7, expires, KEY)}`,
      customerId: 7,
      expires,
      expiresAt: new Date(expires * 1000),
      signature: portalLinkSignature(7, expires, KEY),
    });
    expect(createPortalLink({ customerId: 7, sharedKey: KEY, now: NOW, lifetimeSeconds: 60 }).expires).toBe(
      Math.floor(NOW.getTime() / 1000) + 60,
    );
    expect(() => createPortalLink({ customerId: 7, sharedKey: KEY, now: NOW, lifetimeSeconds: 0 })).toThrow(RangeError);
    expect(() => createPortalLink({ customerId: 0, sharedKey: KEY, now: NOW })).toThrow(RangeError);
  });

  it('verifies a genuine link until its expiry second and refuses it from then on', () => {
    const link = createPortalLink({ customerId: 7, sharedKey: KEY, now: NOW, lifetimeSeconds: 3600 });
    const input = { customerId: '7', expires: String(link.expires), signature: link.signature, sharedKey: KEY };
    expect(verifyPortalLink({ ...input, now: NOW })).toBe(true);
    expect(verifyPortalLink({ ...input, now: new Date(link.expires * 1000 - 1) })).toBe(true);
    expect(verifyPortalLink({ ...input, now: new Date(link.expires * 1000) })).toBe(false);
    expect(checkPortalLink({ ...input, now: new Date(link.expires * 1000) })).toBe('expired');
    // Hex case does not matter (as for every signature of the service).
    expect(verifyPortalLink({ ...input, signature: link.signature.toUpperCase(), now: NOW })).toBe(true);
  });

  it('refuses tampered, malformed and foreign links as invalid, whatever their date', () => {
    const link = createPortalLink({ customerId: 7, sharedKey: KEY, now: NOW });
    const good = {
      customerId: '7',
      expires: String(link.expires),
      signature: link.signature,
      sharedKey: KEY,
      now: NOW,
    };
    const cases = [
      { ...good, customerId: '8' },
      { ...good, customerId: '07' },
      { ...good, customerId: '0' },
      { ...good, customerId: '7x' },
      { ...good, expires: String(link.expires + 1) },
      { ...good, expires: `0${link.expires}` },
      { ...good, signature: link.signature.slice(0, 31) },
      { ...good, signature: `${link.signature}0` },
      { ...good, signature: `${link.signature.slice(0, 31)}${link.signature.endsWith('0') ? '1' : '0'}` },
      { ...good, signature: 'z'.repeat(32) },
      { ...good, sharedKey: 'another-site' },
    ];
    for (const input of cases) expect(checkPortalLink(input), JSON.stringify(input)).toBe('invalid');
    // A forged link with a past date is `invalid`, not `expired`: only genuine links are told apart.
    const past = { ...good, expires: '1000', signature: portalLinkSignature(7, 1000, 'guess') };
    expect(checkPortalLink(past)).toBe('invalid');
    expect(checkPortalLink({ ...past, signature: portalLinkSignature(7, 1000, KEY) })).toBe('expired');
  });
});

describe('hosted card update page (GET|POST /update_payment/{id}/{token})', () => {
  const fixture = useHostedFixture();

  it('H1 through the page: plain, pretty-id, long and upper-case tokens work; a changed or short token, another id, another site and an unknown site 404', async () => {
    const f = fixture();
    expect(hostedPageToken('update_payment', 77, '1234')).toBe('b59a09cc72');
    await setSharedKey(f, 'acme', '1234');
    const view = await subscriptionWithId(f, 'acme', 77);
    for (const path of [
      '/update_payment/77/b59a09cc72',
      '/update_payment/77-john-doe/b59a09cc72',
      '/update_payment/77/b59a09cc72ffff',
      '/update_payment/77/B59A09CC72',
    ]) {
      const reply = await f.page('acme', path);
      expectHtml(reply, 200);
      expect(reply.text).toContain('Update your payment details');
      expect(reply.text).toContain('Visa ending in 1111');
      // The form posts back to the URL as given, pretty id and long token included.
      expect(reply.text).toContain(`<form method="post" action="${path}">`);
    }
    expect(view.subscription.id).toBe(77);
    for (const path of [
      '/update_payment/77/b59a09cc73',
      '/update_payment/77/b59a09cc7',
      '/update_payment/78/b59a09cc72',
      '/update_payment/john-77/b59a09cc72',
      '/update_payment/77',
    ]) {
      const reply = await f.page('acme', path);
      expectHtml(reply, 404);
      expect(reply.text).toContain('This link is not valid');
    }
    // The same URL on another site's host: that site's key does not make this token.
    expectHtml(await f.page('globex', '/update_payment/77/b59a09cc72'), 404);
    // An unknown site is the same 404 as a wrong token.
    expectHtml(await f.page('acme', '/update_payment/77/b59a09cc72', { host: `nosuch.localhost:${f.port}` }), 404);
  });

  it('H2 and H3 through the page: the token of the reference vectors opens the page on a site with that key', async () => {
    const f = fixture();
    expect(hostedPageToken('update_payment', 42, 'abc123')).toBe('8f54d8c730');
    expect(hostedPageToken('update_payment', 1001, 'sharedKEY_9')).toBe('5bba74930b');
    await setSharedKey(f, 'acme', 'abc123');
    await subscriptionWithId(f, 'acme', 42);
    expectHtml(await f.page('acme', '/update_payment/42/8f54d8c730'), 200);
    expectHtml(await f.page('acme', '/update_payment/42-jane/8f54d8c730'), 200);
    expectHtml(await f.page('acme', '/update_payment/42/8f54d8c731'), 404);
    await setSharedKey(f, 'acme', 'sharedKEY_9');
    // The old key's token stops working as soon as the key changes.
    expectHtml(await f.page('acme', '/update_payment/42/8f54d8c730'), 404);
    await subscriptionWithId(f, 'acme', 1001, 'basic');
    expectHtml(await f.page('acme', '/update_payment/1001/5bba74930b'), 200);
    expectHtml(await f.page('acme', '/update_payment/1001-x/5bba74930bffff'), 200);
    expectHtml(await f.page('acme', '/update_payment/1001/5bba74930c'), 404);
  }, 120_000);

  it('404s a subscription of another site even with a token made with that site’s own key', async () => {
    const f = fixture();
    const acmeView = await f.subscribe('acme', 'pro');
    const token = hostedPageToken('update_payment', acmeView.subscription.id, await sharedKeyOf(f, 'globex'));
    const reply = await f.page('globex', cardUpdatePath(acmeView.subscription.id, token));
    expectHtml(reply, 404);
    const post = await f.page('globex', cardUpdatePath(acmeView.subscription.id, token), { form: CARD_FORM });
    expectHtml(post, 404);
    const after = await f.engine.site('acme').subscriptions.get(acmeView.subscription.id);
    expect(after.paymentProfile?.lastFour).toBe('1111');
  });

  it('serves accessible HTML with no script, no caching and no referrer', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const reply = await f.page('acme', await validCardPath(f, view));
    expectHtml(reply, 200);
    expect(reply.text).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(reply.text).not.toMatch(/<script/i);
    for (const [id, label] of [
      ['card-number', 'Card number'],
      ['card-month', 'Expiration month (MM)'],
      ['card-year', 'Expiration year (YYYY)'],
      ['card-cvv', 'Security code (CVV)'],
      ['card-first-name', 'First name on card'],
    ]) {
      expect(reply.text).toContain(`<label for="${id}">${label}</label>`);
      expect(reply.text).toMatch(new RegExp(`<input id="${id}" `));
    }
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.headers['referrer-policy']).toBe('no-referrer');
    expect(reply.headers['content-security-policy']).toContain("default-src 'none'");
    expect(reply.headers['content-security-policy']).toContain("form-action 'self'");
    expect(reply.text).toContain('Pro');
    expect(reply.text).toContain('Ada Lovelace');
  });

  it('updates the card through a form POST to the same URL, and shows the new card', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const path = await validCardPath(f, view);
    const reply = await f.page('acme', path, { form: CARD_FORM });
    expectHtml(reply, 200);
    expect(reply.text).toContain('Your card was updated.');
    expect(reply.text).toContain('Visa ending in 4242, expires 10/2031');
    expect(reply.text).not.toContain('4242424242424242');
    const after = await f.engine.site('acme').subscriptions.get(view.subscription.id);
    expect(after.paymentProfile).toMatchObject({
      lastFour: '4242',
      expirationMonth: 10,
      expirationYear: 2031,
      firstName: 'Grace',
      lastName: 'Hopper',
    });
    expect(after.paymentProfile?.id).not.toBe(view.paymentProfile?.id);
  });

  it('documents its one deviation: a POST with a valid token needs no prior GET (no session is kept)', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    // The first request to this URL is the POST; the reference's service would 404 it.
    const reply = await f.page('acme', await validCardPath(f, view), { form: CARD_FORM });
    expectHtml(reply, 200);
    expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).paymentProfile?.lastFour).toBe('4242');
  });

  it('shows the engine’s errors, escaped, keeps the names but never the number, and changes nothing', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const path = await validCardPath(f, view);
    const reply = await f.page('acme', path, {
      form: { ...CARD_FORM, first_name: '<script>alert(1)</script>', full_number: '4242424242424241' },
    });
    expectHtml(reply, 422);
    expect(reply.text).toContain('Your card was not updated:');
    expect(reply.text).toContain('<li>Credit card number: is invalid.</li>');
    expect(reply.text).toContain('value="&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(reply.text).not.toContain('<script>alert(1)');
    expect(reply.text).not.toContain('4242424242424241');
    const blank = await f.page('acme', path, { form: {} });
    expectHtml(blank, 422);
    expect(blank.text).toContain('Credit card number: cannot be blank.');
    expect(blank.text).toContain('Credit card expiration month: cannot be blank.');
    const after = await f.engine.site('acme').subscriptions.get(view.subscription.id);
    expect(after.paymentProfile?.lastFour).toBe('1111');
  });

  it('escapes what the database holds (customer names) on the page', async () => {
    const f = fixture();
    const view = await f.engine.site('acme').subscriptions.create({
      productHandle: 'pro',
      customer: { firstName: '<img src=x onerror=alert(1)>', lastName: '"Q"', email: 'x@example.com' },
      creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
    });
    const reply = await f.page('acme', await validCardPath(f, view));
    expectHtml(reply, 200);
    expect(reply.text).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;Q&quot;');
    expect(reply.text).not.toContain('<img');
  });

  it('refuses a POST that is not a form with 415, and a wrong token POST with 404, changing nothing', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const path = await validCardPath(f, view);
    const json = await f.page('acme', path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expectHtml(json, 415);
    const wrong = await f.page('acme', `${path.slice(0, -1)}${path.endsWith('0') ? '1' : '0'}`, { form: CARD_FORM });
    expectHtml(wrong, 404);
    expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).paymentProfile?.lastFour).toBe('1111');
  });
});

interface ManagementLink {
  readonly url: string;
  readonly expires_at: string;
}

async function managementLink(f: HostedFixture, customerId: number): Promise<ManagementLink> {
  const reply = await f.api('acme', `/portal/customers/${customerId}/management_link.json`);
  expect(reply.status, reply.text).toBe(200);
  return reply.json<ManagementLink>();
}

async function portalPath(f: HostedFixture, customerId: number): Promise<string> {
  return new URL((await managementLink(f, customerId)).url).pathname;
}

/** Posts a portal action and follows its 303 with the flash cookie, as a browser would; returns both replies. */
async function act(
  f: HostedFixture,
  base: string,
  action: string,
  form: Record<string, string> | [string, string][],
): Promise<{ post: HttpReply; page: HttpReply }> {
  const post = await f.page('acme', `${base}/${action}`, { form });
  expect(post.status, post.text.slice(0, 300)).toBe(303);
  expect(post.headers.location).toBe(base);
  const setCookie = post.headers['set-cookie']?.[0] ?? '';
  expect(setCookie).toContain(`Path=${base}`);
  expect(setCookie).toContain('HttpOnly');
  const cookie = setCookie.split(';')[0] ?? '';
  const page = await f.page('acme', base, { cookie });
  expectHtml(page, 200);
  // Shown once: the page clears the flash cookie.
  expect(page.headers['set-cookie']?.[0]).toMatch(/^portal_flash=; Path=.*Max-Age=0/);
  return { post, page };
}

describe('billing portal management link (GET /portal/customers/{id}/management_link.json)', () => {
  const fixture = useHostedFixture();

  it('answers a signed URL on the site host that expires in 65 days, with expires_at in the site zone', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const link = await managementLink(f, view.customer.id);
    const expires = Math.floor(new Date(START).getTime() / 1000) + 65 * 86_400;
    const signature = portalLinkSignature(view.customer.id, expires, await sharedKeyOf(f, 'acme'));
    expect(link.url).toBe(`${f.origin('acme')}/portal/${view.customer.id}/${expires}/${signature}`);
    expect(link.expires_at).toBe(
      wireTimestamp(new Date(expires * 1000), { timeZone: 'America/New_York', currency: 'USD' }),
    );
    expect(link.expires_at).toMatch(/-0[45]:00$/);
  });

  it('needs the API key, and 404s a customer that is not the site’s', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const path = `/portal/customers/${view.customer.id}/management_link.json`;
    const noKey = await f.page('acme', path);
    expect(noKey.status).toBe(401);
    expect((await f.api('acme', path, 'wrong-key')).status).toBe(401);
    expect((await f.api('globex', path)).status).toBe(404);
    expect((await f.api('acme', '/portal/customers/99999/management_link.json')).status).toBe(404);
  });
});

describe('billing portal lifetime option', () => {
  const fixture = useHostedFixture({ portalLink: { lifetimeSeconds: 3600 } });

  it('issues links of the configured lifetime', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const link = await managementLink(f, view.customer.id);
    const expires = Math.floor(new Date(START).getTime() / 1000) + 3600;
    expect(new URL(link.url).pathname.split('/')[3]).toBe(String(expires));
  });
});

describe('billing portal page (GET /portal/{customer_id}/{expires}/{signature})', () => {
  const fixture = useHostedFixture();

  it('lists the customer’s subscriptions (and only theirs) with every allowed action as a form', async () => {
    const f = fixture();
    const mine = await f.subscribe('acme', 'pro', 'ada@example.com');
    const other = await f.subscribe('acme', 'premium', 'bob@example.com');
    const base = await portalPath(f, mine.customer.id);
    const reply = await f.page('acme', base);
    expectHtml(reply, 200);
    expect(reply.text).toContain('Manage your subscriptions');
    expect(reply.text).toContain(`<h2 id="subscription-${mine.subscription.id}">Pro</h2>`);
    expect(reply.text).not.toContain(`subscription-${other.subscription.id}`);
    for (const action of ['change_plan', 'allocate', 'update_card', 'cancel']) {
      expect(reply.text).toContain(`<form method="post" action="${base}/${action}">`);
    }
    // Plan choices: the other products of the family, not the current one, not another family's.
    expect(reply.text).toContain(`name="product_id" value="${f.catalog.products.premium}"`);
    expect(reply.text).toContain(`name="product_id" value="${f.catalog.products.basic}"`);
    expect(reply.text).not.toContain(`name="product_id" value="${f.catalog.products.pro}"`);
    expect(reply.text).not.toContain(`name="product_id" value="${f.catalog.otherFamilyProduct}"`);
    expect(reply.text).toContain(
      `<label for="component-${mine.subscription.id}-${f.catalog.components.seats}">Seats (seat)</label>`,
    );
    expect(reply.text).toContain(`name="quantity[${f.catalog.components.support}]"`);
    expect(reply.text).not.toMatch(/<script/i);
  });

  it('works until the link expires (injectable clock), then answers 410; forged or foreign links 404', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const base = await portalPath(f, view.customer.id);
    const expires = Number(base.split('/')[3]);
    f.clock.set(expires * 1000 - 1000);
    expectHtml(await f.page('acme', base), 200);
    f.clock.set(expires * 1000);
    const expired = await f.page('acme', base);
    expectHtml(expired, 410);
    expect(expired.text).toContain('This billing portal link has expired.');
    // Actions are refused alike once expired, and change nothing.
    expectHtml(
      await f.page('acme', `${base}/cancel`, { form: { subscription_id: String(view.subscription.id) } }),
      410,
    );
    expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).subscription.cancelAtEndOfPeriod).toBe(
      false,
    );
    f.clock.set(START);
    const [, , id, exp, sig] = base.split('/');
    const flipped = `${sig?.slice(0, -1)}${sig?.endsWith('0') ? '1' : '0'}`;
    expectHtml(await f.page('acme', `/portal/${id}/${exp}/${flipped}`), 404);
    expectHtml(await f.page('acme', `/portal/${id}/${Number(exp) + 1}/${sig}`), 404);
    expectHtml(await f.page('globex', base), 404);
    // A truncated portal URL is a page's 404, not the main API's 401 challenge.
    const truncated = await f.page('acme', `/portal/${id}/${exp}`);
    expectHtml(truncated, 404);
    expect(truncated.headers['www-authenticate']).toBeUndefined();
  });

  it('refuses an action on another customer’s subscription with 404 and changes nothing', async () => {
    const f = fixture();
    const mine = await f.subscribe('acme', 'pro', 'ada@example.com');
    const theirs = await f.subscribe('acme', 'pro', 'bob@example.com');
    const base = await portalPath(f, mine.customer.id);
    const reply = await f.page('acme', `${base}/cancel`, { form: { subscription_id: String(theirs.subscription.id) } });
    expectHtml(reply, 404);
    const after = await f.engine.site('acme').subscriptions.get(theirs.subscription.id);
    expect(after.subscription.cancelAtEndOfPeriod).toBe(false);
    expectHtml(await f.page('acme', `${base}/cancel`, { form: { subscription_id: 'abc' } }), 404);
    expectHtml(
      await f.page('acme', `${base}/explode`, { form: { subscription_id: String(mine.subscription.id) } }),
      404,
    );
  });

  it('changes the plan to another product of the family, and refuses one of another family', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const base = await portalPath(f, view.customer.id);
    const id = String(view.subscription.id);
    const { page } = await act(f, base, 'change_plan', {
      subscription_id: id,
      product_id: String(f.catalog.products.premium),
    });
    expect(page.text).toContain('Your plan is now Premium.');
    expect(page.text).toContain(`<h2 id="subscription-${id}">Premium</h2>`);
    expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).product.product.handle).toBe(
      'premium',
    );
    const refused = await act(f, base, 'change_plan', {
      subscription_id: id,
      product_id: String(f.catalog.otherFamilyProduct),
    });
    expect(refused.page.text).toContain('role="alert"');
    expect(refused.page.text).toContain('Plan: choose one of the plans offered.');
    expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).product.product.handle).toBe(
      'premium',
    );
  });

  it('cancels at the end of the period (billing portal method), and undoes it', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const base = await portalPath(f, view.customer.id);
    const id = String(view.subscription.id);
    const { page } = await act(f, base, 'cancel', { subscription_id: id, reason: 'Too <b>expensive</b>' });
    expect(page.text).toContain(
      'Your subscription will be cancelled at the end of the current period, on February 15, 2026.',
    );
    expect(page.text).toContain(`data-testid="cancels-on-${id}">February 15, 2026</dd>`);
    expect(page.text).toContain(`action="${base}/undo_cancel"`);
    const cancelled = await f.engine.site('acme').subscriptions.get(view.subscription.id);
    expect(cancelled.subscription).toMatchObject({
      state: 'active',
      cancelAtEndOfPeriod: true,
      cancellationMessage: 'Too <b>expensive</b>',
    });
    const undone = await act(f, base, 'undo_cancel', { subscription_id: id });
    expect(undone.page.text).toContain('Your subscription will continue.');
    expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).subscription.cancelAtEndOfPeriod).toBe(
      false,
    );
  });

  it('updates the card from the portal, and shows a refused card as an error', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const base = await portalPath(f, view.customer.id);
    const id = String(view.subscription.id);
    const { page } = await act(f, base, 'update_card', { subscription_id: id, ...CARD_FORM });
    expect(page.text).toContain('Your card was updated: Visa ending in 4242, expires 10/2031.');
    expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).paymentProfile?.lastFour).toBe('4242');
    const refused = await act(f, base, 'update_card', { subscription_id: id, ...CARD_FORM, full_number: '1234' });
    expect(refused.page.text).toContain('Credit card number: is invalid.');
    expect((await f.engine.site('acme').subscriptions.get(view.subscription.id)).paymentProfile?.lastFour).toBe('4242');
  });

  it('changes component allocations from quantity inputs, and refuses a bad quantity without a change', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const base = await portalPath(f, view.customer.id);
    const id = String(view.subscription.id);
    const { seats, support } = f.catalog.components;
    const { page } = await act(f, base, 'allocate', {
      subscription_id: id,
      [`quantity[${seats}]`]: '3',
      [`quantity[${support}]`]: '1',
    });
    expect(page.text).toContain('Your add-ons were updated.');
    expect(page.text).toMatch(
      new RegExp(`name="quantity\\[${seats}\\]" type="number" min="0" step="1" inputmode="numeric" value="3"`),
    );
    expect(page.text).toContain('<option value="1" selected>On</option>');
    const quantities = async () =>
      Object.fromEntries(
        (await f.engine.site('acme').allocations.listComponents(view.subscription.id)).map((row) => [
          row.component.id,
          row.subscriptionComponent.allocatedQuantity,
        ]),
      );
    expect(await quantities()).toEqual({ [seats]: 3, [support]: 1 });
    const refused = await act(f, base, 'allocate', { subscription_id: id, [`quantity[${seats}]`]: 'lots' });
    expect(refused.page.text).toContain('role="alert"');
    expect(await quantities()).toEqual({ [seats]: 3, [support]: 1 });
    const same = await act(f, base, 'allocate', { subscription_id: id, [`quantity[${seats}]`]: '3' });
    expect(same.page.text).toContain('Nothing to change');
  });

  it('refuses each action the site does not allow with a 403 page, changes nothing, and does not offer it', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const base = await portalPath(f, view.customer.id);
    const id = String(view.subscription.id);
    await f.engine.sites.update('acme', {
      settings: {
        portal: { allowPlanChange: false, allowCancel: false, allowCardUpdate: false, allowComponentChange: false },
      },
    });
    const forms: Record<string, Record<string, string>> = {
      change_plan: { subscription_id: id, product_id: String(f.catalog.products.premium) },
      cancel: { subscription_id: id },
      undo_cancel: { subscription_id: id },
      update_card: { subscription_id: id, ...CARD_FORM },
      allocate: { subscription_id: id, [`quantity[${f.catalog.components.seats}]`]: '5' },
    };
    for (const [action, form] of Object.entries(forms)) {
      const reply = await f.page('acme', `${base}/${action}`, { form });
      expectHtml(reply, 403);
      expect(reply.text).toContain('Acme Software does not allow this change in the billing portal.');
    }
    const after = await f.engine.site('acme').subscriptions.get(view.subscription.id);
    expect(after.product.product.handle).toBe('pro');
    expect(after.subscription.cancelAtEndOfPeriod).toBe(false);
    expect(after.paymentProfile?.lastFour).toBe('1111');
    expect(await f.engine.site('acme').allocations.listComponents(view.subscription.id)).toEqual([]);
    const page = await f.page('acme', base);
    expectHtml(page, 200);
    expect(page.text).not.toContain('<form');
    // One setting at a time: only the cancel form comes back.
    await f.engine.sites.update('acme', { settings: { portal: { allowCancel: true } } });
    const some = await f.page('acme', base);
    expect(some.text).toContain(`action="${base}/cancel"`);
    expect(some.text).not.toContain(`action="${base}/change_plan"`);
  });

  it('escapes customer data and ignores a malformed or forged flash cookie', async () => {
    const f = fixture();
    const view = await f.engine.site('acme').subscriptions.create({
      productHandle: 'pro',
      customer: { firstName: '<script>x()</script>', lastName: 'L', email: 'x@example.com' },
      creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 },
    });
    const base = await portalPath(f, view.customer.id);
    const reply = await f.page('acme', base, { cookie: 'portal_flash=%%%not-base64' });
    expectHtml(reply, 200);
    expect(reply.text).toContain('&lt;script&gt;x()&lt;/script&gt; L');
    expect(reply.text).not.toContain('<script>');
    // The cookie is signed (security-edge.test.ts): an unsigned message of the customer's own is not shown.
    const forged = Buffer.from(JSON.stringify({ kind: 'notice', messages: ['<b>hi</b>'] })).toString('base64url');
    const shown = await f.page('acme', base, { cookie: `portal_flash=${forged}` });
    expectHtml(shown, 200);
    expect(shown.text).not.toContain('hi</');
    expect(shown.text).not.toContain('role="status"');
  });
});

describe('demo merchant pages (direct post signup)', () => {
  const fixture = useHostedFixture({ demo: true });

  async function signupForm(f: HostedFixture): Promise<{ action: string; hidden: [string, string][] }> {
    const demo = f.demoOrigin ?? '';
    const reply = await fetch(`${demo}/demo/signup`);
    expect(reply.status).toBe(200);
    const text = await reply.text();
    const action = /<form method="post" action="([^"]+)">/.exec(text)?.[1] ?? '';
    return { action, hidden: hiddenFields(text) };
  }

  const CUSTOMER: [string, string][] = [
    ['signup[customer][first_name]', 'Dee'],
    ['signup[customer][last_name]', 'Merchant'],
    ['signup[customer][email]', 'dee@example.com'],
    ['signup[payment_profile][card_number]', '4111111111111111'],
    ['signup[payment_profile][expiration_month]', '12'],
    ['signup[payment_profile][expiration_year]', '2030'],
  ];

  /** Posts the form to the direct endpoint and returns the redirect target (the demo's return page). */
  async function submit(f: HostedFixture, fields: [string, string][]): Promise<URL> {
    const { action, hidden } = await signupForm(f);
    const reply = await fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([...hidden, ...fields]).toString(),
      redirect: 'manual',
    });
    expect(reply.status).toBe(303);
    return new URL(reply.headers.get('location') ?? '');
  }

  it('signs the hidden secure fields with the site’s direct secret and posts to the direct endpoint', async () => {
    const f = fixture();
    const { action, hidden } = await signupForm(f);
    expect(action).toBe(`http://127.0.0.1:${f.port}/api/v2/signups`);
    const fields = Object.fromEntries(hidden);
    const direct = f.sites.acme.direct;
    expect(fields['secure[api_id]']).toBe(direct.apiId);
    expect(fields['secure[timestamp]']).toBe(String(Math.floor(new Date(START).getTime() / 1000)));
    expect(fields['secure[data]']).toBe(
      `redirect_uri=${encodeURIComponent(`${f.demoOrigin}/demo/return`)}&signup[product][handle]=pro`,
    );
    const expected = directRequestSignature(
      {
        apiId: direct.apiId,
        timestamp: fields['secure[timestamp]'] ?? '',
        nonce: fields['secure[nonce]'] ?? '',
        data: fields['secure[data]'] ?? '',
      },
      direct.apiSecret,
    );
    expect(fields['secure[signature]']).toBe(expected);
    expect(JSON.stringify(hidden)).not.toContain(direct.apiSecret);
  });

  it('completes a signup: the direct endpoint redirects to the return page, which shows the verified result', async () => {
    const f = fixture();
    const target = await submit(f, CUSTOMER);
    expect(`${target.origin}${target.pathname}`).toBe(`${f.demoOrigin}/demo/return`);
    const reply = await fetch(target);
    expect(reply.status).toBe(200);
    const text = await reply.text();
    expect(text).toContain('Thank you for subscribing');
    expect(text).toContain('<dd data-testid="outcome">success</dd>');
    expect(text).toContain('<dd data-testid="result-code">2000 (Success)</dd>');
    expect(text).toContain(`<dd data-testid="call-id">${target.searchParams.get('call_id')}</dd>`);
    const [view] = await f.engine.site('acme').subscriptions.list();
    expect(view?.customer.email).toBe('dee@example.com');
    expect(view?.product.product.handle).toBe('pro');
  });

  it('shows a declined signup as a verified failure with the call’s errors', async () => {
    const f = fixture();
    const fields = CUSTOMER.map(([k, v]): [string, string] => [k, k.endsWith('[card_number]') ? '2' : v]);
    const target = await submit(f, fields);
    const text = await (await fetch(target)).text();
    expect(text).toContain('Signup failed');
    expect(text).toContain('<dd data-testid="outcome">failure</dd>');
    expect(text).toContain('4300 (Card declined)');
    // The reason comes from the call record, read with the direct password.
    expect(text).toContain('<li>Bogus Gateway: Forced failure</li>');
    expect(await f.engine.site('acme').subscriptions.list()).toEqual([]);
  });

  it('refuses a return whose signature does not verify, trusting nothing in it', async () => {
    const f = fixture();
    const target = await submit(f, CUSTOMER);
    target.searchParams.set('result_code', '4300');
    const reply = await fetch(target);
    expect(reply.status).toBe(400);
    const text = await reply.text();
    expect(text).toContain('Response not verified');
    expect(text).not.toContain('data-testid="call-id"');
  });
});
