import {
  AutoInvite,
  BillingPortalController,
  Direction,
  InvoicesController,
  PaymentProfilesController,
} from '@maxio-com/advanced-billing-sdk';
import { type BillingEngine, createBillingEngine, NO_MAILER_MESSAGE } from 'billing-engine';
import { beforeEach, describe, expect, it } from 'vitest';
import { capturingMailer } from '../support/capturing-mailer.js';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkFailure } from './support/maxio-sdk.js';
import { subscribeOverHttp } from './support/subscribe.js';

/**
 * The official Maxio SDK's email-driven endpoints (issue #19) against the chargify-compat server:
 * `InvoicesController.sendInvoice` and `listConsolidatedInvoiceSegments`,
 * `PaymentProfilesController.sendRequestUpdatePaymentEmail` and `BillingPortalController`'s enable,
 * resend and revoke. Every answer is validated by the SDK's own schemas.
 */
describe('official Maxio SDK 6.1.0: email-driven endpoints', () => {
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

  async function setup() {
    const f = fixture();
    await seedCatalog(f.engine);
    const sub = await subscribeOverHttp(f);
    const [invoice] = (await f.engine.site('acme').invoices.list({ subscriptionId: sub.id })).invoices;
    return { f, sub, uid: invoice!.uid, client: acmeClient(f) };
  }

  it('sends an invoice and lists its (empty) consolidation segments', async () => {
    const { f, uid, client } = await setup();
    const invoices = new InvoicesController(client);
    const sent = await invoices.sendInvoice(uid, {
      recipientEmails: ['ap@customer.test'],
      ccRecipientEmails: ['cfo@customer.test'],
      bccRecipientEmails: ['archive@acme.test'],
    });
    expect(sent.statusCode).toBe(204);
    await mailing!.deliverMail();
    expect(capture.sent).toHaveLength(1);
    expect(capture.sent[0]).toMatchObject({
      kind: 'invoice',
      to: ['ap@customer.test'],
      cc: ['cfo@customer.test'],
      bcc: ['archive@acme.test'],
    });
    const refused = await sdkFailure(invoices.sendInvoice(uid, { recipientEmails: ['not an address'] }));
    expect(refused).toEqual({
      status: 422,
      body: { errors: ['Recipient emails: "not an address" is not a valid email address.'] },
    });

    const segments = await sdk(
      invoices.listConsolidatedInvoiceSegments({ invoiceUid: uid, page: 1, perPage: 10, direction: Direction.Asc }),
    );
    expect(segments.invoices).toEqual([]);
    expect(segments).toMatchObject({ page: 1, per_page: 10, total_pages: 0 });
    expect((await sdkFailure(invoices.listConsolidatedInvoiceSegments({ invoiceUid: 'inv_nosuch' }))).status).toBe(404);
    expect(f.logged).toEqual([]);
  });

  it('asks the customer by email to update their payment details', async () => {
    const { sub, client } = await setup();
    const profiles = new PaymentProfilesController(client);
    const reply = await profiles.sendRequestUpdatePaymentEmail(sub.id);
    expect(reply.statusCode).toBe(200);
    await mailing!.deliverMail();
    expect(capture.sent[0]?.kind).toBe('payment_update_request');
    expect(capture.sent[0]?.to).toEqual(['ada@example.com']);
    expect(capture.sent[0]?.text).toContain(`https://acme.billing.test/update_payment/${sub.id}/`);
    expect((await sdkFailure(profiles.sendRequestUpdatePaymentEmail(999_999))).status).toBe(404);
  });

  it('enables the billing portal with an invitation, resends it and revokes access', async () => {
    const { f, sub, client } = await setup();
    const portal = new BillingPortalController(client);
    const enabled = await sdk(portal.enableBillingPortalForCustomer(sub.customerId, AutoInvite.Yes));
    expect(enabled.customer).toMatchObject({ id: sub.customerId, email: 'ada@example.com' });
    expect(enabled.customer.portalCustomerCreatedAt).toEqual(expect.any(String));
    expect(enabled.customer.portalInviteLastSentAt).toBe(enabled.customer.portalCustomerCreatedAt);
    expect(enabled.customer.portalInviteLastAcceptedAt).toBeNull();
    await mailing!.deliverMail();
    expect(capture.sent.map((m) => m.kind)).toEqual(['portal_invitation']);

    f.clock.advance({ hours: 2 });
    const resent = await sdk(portal.resendBillingPortalInvitation(sub.customerId));
    expect(Date.parse(resent.lastSentAt!)).toBe(f.clock.now().getTime());
    await mailing!.deliverMail();
    expect(capture.sent).toHaveLength(2);

    const revoked = await sdk(portal.revokeBillingPortalAccess(sub.customerId));
    expect(revoked.lastSentAt).toBe(resent.lastSentAt);
    expect(await f.engine.site('acme').portalAccess.allows(sub.customerId)).toBe(false);
    const again = await sdkFailure(portal.resendBillingPortalInvitation(sub.customerId));
    expect(again).toEqual({ status: 422, body: { errors: ['Billing Portal is not enabled for this customer.'] } });
    expect((await sdkFailure(portal.resendBillingPortalInvitation(999_999))).status).toBe(404);

    // Enabling without an invitation sends nothing.
    const back = await sdk(portal.enableBillingPortalForCustomer(sub.customerId));
    expect(back.customer.portalCustomerCreatedAt).toBe(enabled.customer.portalCustomerCreatedAt);
    await mailing!.deliverMail();
    expect(capture.sent).toHaveLength(2);
  });
});

describe('official Maxio SDK 6.1.0: email-driven endpoints without a mailer', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('refuses with the 422 the SDK reads as an error list', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const sub = await subscribeOverHttp(f);
    const client = acmeClient(f);
    const expected = { status: 422, body: { errors: [NO_MAILER_MESSAGE] } };
    const [invoice] = (await f.engine.site('acme').invoices.list({ subscriptionId: sub.id })).invoices;
    expect(await sdkFailure(new InvoicesController(client).sendInvoice(invoice!.uid))).toEqual(expected);
    expect(await sdkFailure(new PaymentProfilesController(client).sendRequestUpdatePaymentEmail(sub.id))).toEqual(
      expected,
    );
    const portal = new BillingPortalController(client);
    expect(await sdkFailure(portal.enableBillingPortalForCustomer(sub.customerId, AutoInvite.Yes))).toEqual(expected);
    expect(await f.engine.countDue()).toBe(0);
  });
});
