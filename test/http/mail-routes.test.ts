import { type BillingEngine, createBillingEngine, NO_MAILER_MESSAGE } from 'billing-engine';
import { beforeEach, describe, expect, it } from 'vitest';
import { capturingMailer } from '../support/capturing-mailer.js';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

/**
 * The email-driven routes (issue #19): sending an invoice, its (always empty) consolidation
 * segments, the card-update request and billing-portal access. The app's engine shares the
 * fixture's storage and clock and has a capturing mailer; `deliver()` runs its mail queue.
 */
function mailFixture() {
  const capture = capturingMailer();
  beforeEach(() => capture.clear());
  let mailing: BillingEngine | undefined;
  const fixture = useHttpFixture({
    compat: 'chargify',
    wrapEngine: (engine) => {
      mailing = createBillingEngine({
        storage: engine.storage,
        clock: engine.clock,
        gateway: engine.gateway,
        mail: { mailer: capture.mailer, siteOrigin: (subdomain) => `https://${subdomain}.billing.test` },
      });
      return mailing;
    },
  });
  return { fixture, capture, deliver: () => mailing!.deliverMail() };
}

async function signupInvoice(f: ReturnType<ReturnType<typeof useHttpFixture>>) {
  await seedCatalog(f.engine);
  const sub = await subscribeOverHttp(f);
  const [invoice] = (await f.engine.site('acme').invoices.list({ subscriptionId: sub.id })).invoices;
  return { sub, invoice: invoice! };
}

describe('email routes with a mailer', () => {
  const { fixture, capture, deliver } = mailFixture();

  it('POST /invoices/{uid}/deliveries.json queues the invoice (204) and the worker sends it', async () => {
    const f = fixture();
    const { invoice } = await signupInvoice(f);
    const reply = await f.as('acme', {
      method: 'POST',
      path: `/invoices/${invoice.uid}/deliveries.json`,
      json: { recipient_emails: ['ap@customer.test'], cc_recipient_emails: ['cfo@customer.test'] },
    });
    expect(reply.status, reply.text).toBe(204);
    expect(reply.text).toBe('');
    expect(capture.calls()).toBe(0);
    expect(await deliver()).toMatchObject({ sent: 1 });
    expect(capture.sent[0]).toMatchObject({ kind: 'invoice', to: ['ap@customer.test'], cc: ['cfo@customer.test'] });

    // No body: the customer's own address.
    const plain = await f.as('acme', { method: 'POST', path: `/invoices/${invoice.uid}/deliveries.json` });
    expect(plain.status, plain.text).toBe(204);
    await deliver();
    expect(capture.sent[1]?.to).toEqual(['ada@example.com']);
  });

  it('answers bad recipients with 422 and an unknown invoice with 404, queueing nothing', async () => {
    const f = fixture();
    const { invoice } = await signupInvoice(f);
    const bad = await f.as('acme', {
      method: 'POST',
      path: `/invoices/${invoice.uid}/deliveries.json`,
      json: { recipient_emails: ['nope'], bcc_recipient_emails: 'x@y.test' },
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({
      errors: [
        'Recipient emails: "nope" is not a valid email address.',
        'Bcc recipient emails: must be a list of email addresses.',
      ],
    });
    const notObject = await f.as('acme', {
      method: 'POST',
      path: `/invoices/${invoice.uid}/deliveries.json`,
      json: [1],
    });
    expect(notObject.status).toBe(422);
    const unknown = await f.as('acme', { method: 'POST', path: '/invoices/inv_nosuch/deliveries.json', json: {} });
    expect(unknown.status).toBe(404);
    // Another site's invoice is unknown too.
    const other = await f.as('globex', { method: 'POST', path: `/invoices/${invoice.uid}/deliveries.json`, json: {} });
    expect(other.status).toBe(404);
    expect(await deliver()).toMatchObject({ processed: 0 });
  });

  it('GET /invoices/{uid}/segments.json: an empty page for a real invoice, 404 for an unknown one', async () => {
    const f = fixture();
    const { invoice } = await signupInvoice(f);
    const reply = await f.as('acme', { path: `/invoices/${invoice.uid}/segments.json?page=2&per_page=5` });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toEqual({ invoices: [], page: 2, per_page: 5, total_pages: 0 });
    expect((await f.as('acme', { path: '/invoices/inv_nosuch/segments.json' })).status).toBe(404);
    expect((await f.as('globex', { path: `/invoices/${invoice.uid}/segments.json` })).status).toBe(404);
  });

  it('POST /subscriptions/{id}/request_payment_profiles_update.json mails the card update link', async () => {
    const f = fixture();
    const { sub } = await signupInvoice(f);
    const reply = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${sub.id}/request_payment_profiles_update.json`,
    });
    expect(reply.status, reply.text).toBe(200);
    await deliver();
    expect(capture.sent[0]?.kind).toBe('payment_update_request');
    expect(capture.sent[0]?.text).toMatch(
      new RegExp(`https://acme\\.billing\\.test/update_payment/${sub.id}/[0-9a-f]{10}`),
    );
    const unknown = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/999999/request_payment_profiles_update.json',
    });
    expect(unknown.status).toBe(404);
  });

  it('enables, invites, resends and revokes portal access; a revoked customer is refused by the portal', async () => {
    const f = fixture();
    const { sub } = await signupInvoice(f);
    const customerId = sub.customerId;
    const linkReply = await f.as('acme', { path: `/portal/customers/${customerId}/management_link.json` });
    const portalPath = new URL(linkReply.json<{ url: string }>().url).pathname;
    const portal = () => f.as('acme', { path: portalPath, key: null, headers: { accept: 'text/html' } });
    expect((await portal()).status).toBe(200);

    const badInvite = await f.as('acme', {
      method: 'POST',
      path: `/portal/customers/${customerId}/enable.json?auto_invite=yes`,
    });
    expect(badInvite.status).toBe(422);
    expect(badInvite.json()).toEqual({ errors: ['Auto invite: must be 0 or 1.'] });

    const enabled = await f.as('acme', {
      method: 'POST',
      path: `/portal/customers/${customerId}/enable.json?auto_invite=1`,
    });
    expect(enabled.status, enabled.text).toBe(200);
    const customer = enabled.json<{ customer: Record<string, unknown> }>().customer;
    expect(customer).toMatchObject({ id: customerId, email: 'ada@example.com' });
    expect(customer.portal_customer_created_at).toEqual(expect.any(String));
    expect(customer.portal_invite_last_sent_at).toEqual(customer.portal_customer_created_at);
    expect(customer.portal_invite_last_accepted_at).toBeNull();
    await deliver();
    expect(capture.sent[0]?.kind).toBe('portal_invitation');
    expect(capture.sent[0]?.text).toContain(`https://acme.billing.test/portal/${customerId}/`);

    f.clock.advance({ minutes: 5 });
    const resent = await f.as('acme', {
      method: 'POST',
      path: `/portal/customers/${customerId}/invitations/invite.json`,
    });
    expect(resent.status, resent.text).toBe(200);
    const resentBody = resent.json<{ last_sent_at: string }>();
    expect(Date.parse(resentBody.last_sent_at)).toBe(f.clock.now().getTime());
    expect(resentBody).not.toHaveProperty('last_accepted_at');

    const revoked = await f.as('acme', {
      method: 'DELETE',
      path: `/portal/customers/${customerId}/invitations/revoke.json`,
    });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.json()).toEqual({ last_sent_at: resentBody.last_sent_at });
    const refused = await portal();
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Access revoked');
    // The resent invitation was still queued: dropped, not sent.
    expect(await deliver()).toMatchObject({ processed: 1, skipped: 1, sent: 0 });

    const again = await f.as('acme', {
      method: 'DELETE',
      path: `/portal/customers/${customerId}/invitations/revoke.json`,
    });
    expect(again.status).toBe(422);
    expect(again.json()).toEqual({ errors: ['Billing Portal is not enabled for this customer.'] });
    const resendRevoked = await f.as('acme', {
      method: 'POST',
      path: `/portal/customers/${customerId}/invitations/invite.json`,
    });
    expect(resendRevoked.status).toBe(422);

    const reenabled = await f.as('acme', { method: 'POST', path: `/portal/customers/${customerId}/enable.json` });
    expect(reenabled.status).toBe(200);
    expect((await portal()).status).toBe(200);
    // Another site cannot reach the customer.
    const other = await f.as('globex', {
      method: 'DELETE',
      path: `/portal/customers/${customerId}/invitations/revoke.json`,
    });
    expect(other.status).toBe(404);
  });
});

describe('email routes without a mailer', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('answers 422 "This site has no mailer configured." and queues nothing', async () => {
    const f = fixture();
    const { sub, invoice } = await signupInvoice(f);
    const calls = [
      { method: 'POST', path: `/invoices/${invoice.uid}/deliveries.json`, json: {} },
      { method: 'POST', path: `/subscriptions/${sub.id}/request_payment_profiles_update.json` },
      { method: 'POST', path: `/portal/customers/${sub.customerId}/enable.json?auto_invite=1` },
      { method: 'POST', path: `/portal/customers/${sub.customerId}/invitations/invite.json` },
    ];
    for (const call of calls) {
      const reply = await f.as('acme', call);
      expect(reply.status, call.path).toBe(422);
      expect(reply.json()).toEqual({ errors: [NO_MAILER_MESSAGE] });
    }
    expect(await f.engine.countDue()).toBe(0);
    expect((await f.engine.site('acme').portalAccess.get(sub.customerId)).access).toBeUndefined();
    // The segments list sends nothing: served without a mailer.
    expect((await f.as('acme', { path: `/invoices/${invoice.uid}/segments.json` })).status).toBe(200);
  });
});
