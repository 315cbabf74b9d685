import {
  type BillingEngine,
  checkPortalLink,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  NO_MAILER_MESSAGE,
  PORTAL_NOT_ENABLED_MESSAGE,
  type Storage,
} from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { hostedPageToken } from '../../src/domain/signing/hosted-page-token.js';
import { capturingMailer } from '../support/capturing-mailer.js';
import { rejection } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const ORIGIN = 'https://acme.billing.test';

interface Fixture {
  engine: BillingEngine;
  /** The same storage and clock, without a mailer. */
  bare: BillingEngine;
  clock: ManualClock;
  storage: Storage;
  siteId: number;
  capture: ReturnType<typeof capturingMailer>;
  subscriptionId: number;
  customerId: number;
  invoiceUid: string;
  invoiceNumber: string;
}

/** Mail through the mailer port (issue #19) on every adapter: queued with the command, sent by runDue. */
export function mailSuite(harness: StorageHarness): void {
  describe(`mail and portal access (${harness.name})`, () => {
    const open: Storage[] = [];
    afterEach(async () => {
      for (const storage of open.splice(0)) await (harness.destroy ? harness.destroy(storage) : storage.close());
    });

    async function fixture(retryDelaysSeconds?: number[]): Promise<Fixture> {
      const storage = await harness.create();
      open.push(storage);
      const clock = new ManualClock('2026-03-01T12:00:00Z');
      const gateway = createTestGateway();
      const capture = capturingMailer();
      const engine = createBillingEngine({
        storage,
        clock,
        gateway,
        mail: {
          mailer: capture.mailer,
          siteOrigin: (subdomain) => `https://${subdomain}.billing.test`,
          ...(retryDelaysSeconds === undefined ? {} : { retryDelaysSeconds }),
        },
      });
      const bare = createBillingEngine({ storage, clock, gateway });
      const { site } = await engine.sites.create({ subdomain: 'acme', name: 'Acme', currency: 'USD' });
      await engine.sites.update('acme', { settings: { invoices: { prefix: 'INV-', netTermsDays: 0 } } });
      const acme = engine.site('acme');
      const family = await acme.catalog.createFamily({ name: 'Plans' });
      await acme.catalog.createProduct(family.id, {
        name: 'Basic',
        handle: 'basic',
        priceInCents: 1250,
        interval: 1,
        intervalUnit: 'month',
      });
      const view = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
        creditCard: VISA,
      });
      const [invoice] = (await acme.invoices.list({ subscriptionId: view.subscription.id })).invoices;
      return {
        engine,
        bare,
        clock,
        storage,
        siteId: site.id,
        capture,
        subscriptionId: view.subscription.id,
        customerId: view.customer.id,
        invoiceUid: invoice!.uid,
        invoiceNumber: invoice!.number!,
      };
    }

    const mailRows = (f: Fixture, subjectId: number) =>
      f.storage.transaction((tx) => tx.dueWork.pendingFor(f.siteId, subjectId, ['mail_delivery']));

    it('queues an invoice with the command and sends it once, from runDue, with its PDF and HTML', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const invoice = await acme.invoices.get(f.invoiceUid);
      const queued = await acme.mail.sendInvoice(f.invoiceUid);
      expect(queued).toMatchObject({ kind: 'invoice', to: ['ada@example.com'], cc: [], bcc: [] });
      // Recorded as due work, nothing sent inside the command.
      const rows = await mailRows(f, invoice.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ kind: 'mail_delivery', status: 'pending', uniqueKey: queued.id });
      expect(f.capture.calls()).toBe(0);
      expect(await f.engine.countDue()).toBe(1);

      const summary = await f.engine.runDue();
      expect(summary.processed).toBe(1);
      expect(f.capture.sent).toHaveLength(1);
      const message = f.capture.sent[0]!;
      expect(message).toMatchObject({
        id: queued.id,
        site: 'acme',
        kind: 'invoice',
        from: 'billing@acme.billing.test',
        to: ['ada@example.com'],
        subject: `Invoice ${f.invoiceNumber} from Acme`,
      });
      expect(message.text).toContain('Amount due: 0.00 USD');
      expect(message.html).toContain(f.invoiceNumber);
      expect(message.attachments.map((a) => [a.filename, a.contentType])).toEqual([
        [`${f.invoiceNumber}.pdf`, 'application/pdf'],
        [`${f.invoiceNumber}.html`, 'text/html; charset=utf-8'],
      ]);
      const pdf = message.attachments[0]!.content as Uint8Array;
      expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
      expect(await mailRows(f, invoice.id)).toEqual([]);

      // Delivered once: a second run finds nothing.
      expect((await f.engine.runDue()).processed).toBe(0);
      expect(f.capture.calls()).toBe(1);
    });

    it('sends to the given recipients, copies and blind copies', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      await acme.mail.sendInvoice(f.invoiceUid, {
        recipientEmails: ['billing@customer.test', ' ap@customer.test '],
        ccRecipientEmails: ['cfo@customer.test'],
        bccRecipientEmails: ['archive@acme.test'],
      });
      await f.engine.deliverMail();
      expect(f.capture.sent[0]).toMatchObject({
        to: ['billing@customer.test', 'ap@customer.test'],
        cc: ['cfo@customer.test'],
        bcc: ['archive@acme.test'],
      });
    });

    it('refuses bad recipient lists with a 422 and queues nothing', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const invoice = await acme.invoices.get(f.invoiceUid);
      const six = ['a', 'b', 'c', 'd', 'e', 'f'].map((l) => `${l}@example.com`);
      const tooMany = await rejection(acme.mail.sendInvoice(f.invoiceUid, { recipientEmails: six }));
      expect(tooMany.httpStatus).toBe(422);
      expect(tooMany.messages).toEqual(['Recipient emails: at most 5 addresses are allowed.']);
      const malformed = await rejection(
        acme.mail.sendInvoice(f.invoiceUid, {
          ccRecipientEmails: ['not-an-address', 'x@y.test'],
          bccRecipientEmails: 'x',
        }),
      );
      expect(malformed.messages).toEqual([
        'Cc recipient emails: "not-an-address" is not a valid email address.',
        'Bcc recipient emails: must be a list of email addresses.',
      ]);
      const header = await rejection(
        acme.mail.sendInvoice(f.invoiceUid, { recipientEmails: ['a@b.test\r\nBcc: x@y.test'] }),
      );
      expect(header.httpStatus).toBe(422);
      expect((await rejection(acme.mail.sendInvoice('inv_nosuch'))).httpStatus).toBe(404);
      const draft = await acme.invoices.createAdhoc(f.subscriptionId, {
        lineItems: [{ title: 'Setup', unitPriceInCents: 5000 }],
        status: 'draft',
      });
      const refusedDraft = await rejection(acme.mail.sendInvoice(draft.uid));
      expect(refusedDraft.messages).toEqual(['Invoice: a draft cannot be sent; issue it first.']);
      expect(await mailRows(f, draft.id)).toEqual([]);
      expect(await mailRows(f, invoice.id)).toEqual([]);
      expect(await f.engine.countDue()).toBe(0);
    });

    it('retries a failed send on the back-off schedule and sends it once it goes through', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const invoice = await acme.invoices.get(f.invoiceUid);
      await acme.mail.sendInvoice(f.invoiceUid);
      f.capture.failNext(2);

      expect(await f.engine.deliverMail()).toEqual({ processed: 1, sent: 0, retried: 1, gaveUp: 0, skipped: 0 });
      const [retry] = await mailRows(f, invoice.id);
      expect(retry).toMatchObject({ status: 'pending', attempts: 1 });
      expect(retry!.dueAt.toISOString()).toBe('2026-03-01T12:01:00.000Z');
      // Not due again until the delay has passed.
      expect((await f.engine.runDue()).processed).toBe(0);
      expect(f.capture.calls()).toBe(1);

      f.clock.advance({ seconds: 60 });
      expect(await f.engine.deliverMail()).toMatchObject({ processed: 1, retried: 1 });
      expect((await mailRows(f, invoice.id))[0]!.dueAt.toISOString()).toBe('2026-03-01T12:06:00.000Z');

      f.clock.advance({ minutes: 5 });
      expect(await f.engine.deliverMail()).toMatchObject({ processed: 1, sent: 1 });
      expect(f.capture.sent).toHaveLength(1);
      expect(f.capture.calls()).toBe(3);
      expect(await mailRows(f, invoice.id)).toEqual([]);
    });

    it('gives a message up after the last retry', async () => {
      const f = await fixture([30]);
      const acme = f.engine.site('acme');
      const invoice = await acme.invoices.get(f.invoiceUid);
      await acme.mail.sendInvoice(f.invoiceUid);
      f.capture.failNext(10);
      expect(await f.engine.deliverMail()).toMatchObject({ retried: 1, gaveUp: 0 });
      f.clock.advance({ seconds: 30 });
      expect(await f.engine.deliverMail()).toMatchObject({ retried: 0, gaveUp: 1 });
      expect(await mailRows(f, invoice.id)).toEqual([]);
      f.clock.advance({ days: 1 });
      expect((await f.engine.deliverMail()).processed).toBe(0);
      expect(f.capture.calls()).toBe(2);
      expect(f.capture.sent).toEqual([]);
    });

    it('without a mailer refuses every command that would send mail, and writes nothing', async () => {
      const f = await fixture();
      const acme = f.bare.site('acme');
      const invoice = await acme.invoices.get(f.invoiceUid);
      // One at a time: started together, a later refusal could settle before anything awaits it.
      for (const attempt of [
        () => acme.mail.sendInvoice(f.invoiceUid),
        () => acme.mail.requestPaymentUpdate(f.subscriptionId),
        () => acme.portalAccess.enable(f.customerId, { invite: true }),
        () => acme.portalAccess.resendInvitation(f.customerId),
      ]) {
        const error = await rejection(attempt());
        expect(error.httpStatus).toBe(422);
        expect(error.messages).toEqual([NO_MAILER_MESSAGE]);
      }
      // An unknown record is a 404 whatever the configuration.
      expect((await rejection(acme.mail.sendInvoice('inv_nosuch'))).httpStatus).toBe(404);
      expect((await rejection(acme.portalAccess.enable(424_242, { invite: true }))).httpStatus).toBe(404);
      expect(await mailRows(f, invoice.id)).toEqual([]);
      expect(await mailRows(f, f.subscriptionId)).toEqual([]);
      expect(await mailRows(f, f.customerId)).toEqual([]);
      expect((await acme.portalAccess.get(f.customerId)).access).toBeUndefined();
      expect(await f.bare.countDue()).toBe(0);
      // Enabling without an invitation sends nothing, so it needs no mailer.
      expect((await acme.portalAccess.enable(f.customerId)).access?.enabled).toBe(true);
    });

    it('emails the hosted card update link of the subscription', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const queued = await acme.mail.requestPaymentUpdate(f.subscriptionId);
      expect(queued).toMatchObject({ kind: 'payment_update_request', to: ['ada@example.com'] });
      expect((await rejection(acme.mail.requestPaymentUpdate(999_999))).httpStatus).toBe(404);
      expect((await f.engine.runDue()).processed).toBe(1);
      const site = await acme.info();
      const url = `${ORIGIN}/update_payment/${f.subscriptionId}/${hostedPageToken('update_payment', f.subscriptionId, site.sharedKey)}`;
      const message = f.capture.sent[0]!;
      expect(message.kind).toBe('payment_update_request');
      expect(message.subject).toBe('Please update your payment details for Acme');
      expect(message.text).toContain(url);
      expect(message.html).toContain(`href="${url}"`);
    });

    it('enables portal access with an invitation carrying a working portal link', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const enabled = await acme.portalAccess.enable(f.customerId, { invite: true });
      expect(enabled.access).toMatchObject({ enabled: true, revokedAt: null });
      expect(enabled.access!.createdAt.toISOString()).toBe('2026-03-01T12:00:00.000Z');
      expect(enabled.access!.inviteLastSentAt?.toISOString()).toBe('2026-03-01T12:00:00.000Z');
      expect(enabled.invitation).toMatchObject({ kind: 'portal_invitation', to: ['ada@example.com'] });

      f.clock.advance({ minutes: 10 });
      expect(await f.engine.deliverMail()).toMatchObject({ processed: 1, sent: 1 });
      const message = f.capture.sent[0]!;
      expect(message.subject).toBe('Your billing portal for Acme');
      const match = message.text.match(/https:\/\/acme\.billing\.test\/portal\/(\d+)\/(\d+)\/([0-9a-f]{32})/);
      expect(match).not.toBeNull();
      const site = await acme.info();
      const [, customerId, expires, signature] = match!;
      expect(Number(customerId)).toBe(f.customerId);
      // Issued when sent, for 65 days.
      expect(Number(expires)).toBe(Date.parse('2026-03-01T12:10:00Z') / 1000 + 65 * 86_400);
      expect(
        checkPortalLink({
          customerId: customerId!,
          expires: expires!,
          signature: signature!,
          sharedKey: site.sharedKey,
          now: f.clock.now(),
        }),
      ).toBe('valid');
      expect(await acme.portalAccess.allows(f.customerId)).toBe(true);
    });

    it('resends, revokes and enables again; a revoked customer gets no invitation and no portal', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      // Never enabled: the portal works (links were handed out before access existed), resend and revoke do not.
      expect(await acme.portalAccess.allows(f.customerId)).toBe(true);
      expect((await rejection(acme.portalAccess.resendInvitation(f.customerId))).messages).toEqual([
        PORTAL_NOT_ENABLED_MESSAGE,
      ]);
      expect((await rejection(acme.portalAccess.revoke(f.customerId))).httpStatus).toBe(422);
      expect((await rejection(acme.portalAccess.enable(424_242))).httpStatus).toBe(404);

      await acme.portalAccess.enable(f.customerId);
      expect(await f.engine.countDue()).toBe(0);
      f.clock.advance({ hours: 1 });
      const resent = await acme.portalAccess.resendInvitation(f.customerId);
      expect(resent.access!.inviteLastSentAt?.toISOString()).toBe('2026-03-01T13:00:00.000Z');
      // The invitation is still queued when access is revoked: it is dropped, not sent.
      const revoked = await acme.portalAccess.revoke(f.customerId);
      expect(revoked.access).toMatchObject({ enabled: false });
      expect(revoked.access!.revokedAt?.toISOString()).toBe('2026-03-01T13:00:00.000Z');
      expect(revoked.access!.createdAt.toISOString()).toBe('2026-03-01T12:00:00.000Z');
      expect(await acme.portalAccess.allows(f.customerId)).toBe(false);
      expect(await f.engine.deliverMail()).toMatchObject({ processed: 1, sent: 0, skipped: 1 });
      expect(f.capture.calls()).toBe(0);
      expect((await rejection(acme.portalAccess.revoke(f.customerId))).messages).toEqual([PORTAL_NOT_ENABLED_MESSAGE]);
      expect((await rejection(acme.portalAccess.resendInvitation(f.customerId))).httpStatus).toBe(422);

      const again = await acme.portalAccess.enable(f.customerId, { invite: true });
      expect(again.access).toMatchObject({ enabled: true });
      expect(again.access!.createdAt.toISOString()).toBe('2026-03-01T12:00:00.000Z');
      expect(await acme.portalAccess.allows(f.customerId)).toBe(true);
      expect(await f.engine.deliverMail()).toMatchObject({ sent: 1 });
      expect((await acme.portalAccess.get(f.customerId)).access).toMatchObject({ enabled: true });
    });

    it('stores one access row per customer: saves replace it, keep its creation, and roll back', async () => {
      const f = await fixture();
      const at = (iso: string) => new Date(iso);
      const row = {
        siteId: f.siteId,
        customerId: f.customerId,
        enabled: true,
        createdAt: at('2026-03-01T12:00:00Z'),
        inviteLastSentAt: null,
        inviteLastAcceptedAt: null,
        revokedAt: null,
        updatedAt: at('2026-03-01T12:00:00Z'),
      };
      const first = await f.storage.transaction((tx) => tx.portalAccess.save(row));
      const second = await f.storage.transaction((tx) =>
        tx.portalAccess.save({
          ...row,
          enabled: false,
          createdAt: at('2027-01-01T00:00:00Z'),
          revokedAt: at('2026-03-02T08:30:00.123Z'),
          inviteLastSentAt: at('2026-03-01T12:05:00Z'),
          updatedAt: at('2026-03-02T08:30:00.123Z'),
        }),
      );
      expect(second.id).toBe(first.id);
      expect(second).toEqual({
        ...row,
        id: first.id,
        enabled: false,
        revokedAt: at('2026-03-02T08:30:00.123Z'),
        inviteLastSentAt: at('2026-03-01T12:05:00Z'),
        updatedAt: at('2026-03-02T08:30:00.123Z'),
      });
      expect(await f.storage.transaction((tx) => tx.portalAccess.find(f.siteId, f.customerId))).toEqual(second);
      await expect(
        f.storage.transaction(async (tx) => {
          await tx.portalAccess.save({ ...row, enabled: true, updatedAt: at('2026-03-03T00:00:00Z') });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect((await f.storage.transaction((tx) => tx.portalAccess.find(f.siteId, f.customerId)))?.enabled).toBe(false);
    });

    it('lets a customer with portal access be deleted', async () => {
      const f = await fixture();
      const acme = f.engine.site('acme');
      const customer = await acme.customers.create({ firstName: 'Bo', lastName: 'Brand', email: 'bo@example.com' });
      await acme.portalAccess.enable(customer.id, { invite: true });
      await acme.customers.delete(customer.id);
      expect(await f.storage.transaction((tx) => tx.portalAccess.find(f.siteId, customer.id))).toBeUndefined();
      // Its queued invitation has no one to go to any more: dropped at delivery.
      expect(await f.engine.deliverMail()).toMatchObject({ processed: 1, skipped: 1, sent: 0 });
    });

    it('keeps portal access per site and drops it with the customer data', async () => {
      const f = await fixture();
      await f.engine.sites.create({ subdomain: 'other', currency: 'USD' });
      await f.engine.site('acme').portalAccess.enable(f.customerId);
      // Another site cannot reach the customer by id.
      expect((await rejection(f.engine.site('other').portalAccess.revoke(f.customerId))).httpStatus).toBe(404);
      expect(await f.engine.site('other').portalAccess.allows(f.customerId)).toBe(false);
      await f.engine.sites.clearData('acme');
      expect(await f.storage.transaction((tx) => tx.portalAccess.find(f.siteId, f.customerId))).toBeUndefined();
    });
  });
}
