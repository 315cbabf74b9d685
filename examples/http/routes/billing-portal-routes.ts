import { type CustomerPortalAccess, invalid, type PortalAccessRecord } from 'billing-engine';
import type { Hono } from 'hono';
import { type HttpAppEnv, type HttpContext, idParam, sendJson, wireContext } from '../http-context.js';
import { customerJson, queryText, type WireContext, wireTimestamp } from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/** An instant of the access record on the wire, or null. */
function stamp(date: Date | null | undefined, context: WireContext): string | null {
  return date === null || date === undefined ? null : wireTimestamp(date, context);
}

/** `auto_invite`: `1` invites, `0` or nothing does not; anything else is a 422. */
function autoInvite(c: HttpContext): boolean {
  const value = queryText(queryOf(c).auto_invite);
  if (value === undefined || value === '0') return false;
  if (value === '1') return true;
  throw invalid('Auto invite: must be 0 or 1.', 'auto_invite');
}

/** `{"customer":{...}}` with the portal fields of the SDK's `Customer`. */
function customerWithPortal(result: CustomerPortalAccess, context: WireContext): { customer: Record<string, unknown> } {
  const { customer, access } = result;
  return {
    customer: {
      ...customerJson(customer, context),
      portal_customer_created_at: stamp(access?.createdAt, context),
      portal_invite_last_sent_at: stamp(access?.inviteLastSentAt, context),
      portal_invite_last_accepted_at: stamp(access?.inviteLastAcceptedAt, context),
    },
  };
}

/**
 * The SDK's `ResentInvitation` / `RevokedInvitation`: when the invitation was last sent and
 * accepted. Their fields are optional but not nullable, so one that never happened is left out.
 */
function invitationJson(access: PortalAccessRecord | undefined, context: WireContext): Record<string, string> {
  const out: Record<string, string> = {};
  const sent = stamp(access?.inviteLastSentAt, context);
  const accepted = stamp(access?.inviteLastAcceptedAt, context);
  if (sent !== null) out.last_sent_at = sent;
  if (accepted !== null) out.last_accepted_at = accepted;
  return out;
}

/**
 * The billing portal's access endpoints (the SDK's `BillingPortalController`, besides the
 * management link of `portal-link-routes.ts`):
 *
 * - `POST /portal/customers/{id}/enable.json[?auto_invite=1]`: enables the customer's portal
 *   access and, with `auto_invite=1`, queues an invitation email with a portal link; answers the
 *   customer with `portal_customer_created_at` and `portal_invite_last_sent_at`.
 * - `POST /portal/customers/{id}/invitations/invite.json`: sends the invitation again; 422 when the
 *   customer's access is not enabled. Answers `last_sent_at` and `last_accepted_at`.
 * - `DELETE /portal/customers/{id}/invitations/revoke.json`: revokes access, so that the
 *   customer's portal links stop working; 422 when not enabled.
 *
 * Sending mail needs the engine's `mail` option: without it, an invitation is a 422 ("This site has
 * no mailer configured.") and nothing changes. An unknown customer is a 404.
 */
export function registerBillingPortalRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/portal/customers/:id/enable.json', async (c) => {
    const invite = autoInvite(c);
    const result = await c.var.site.portalAccess.enable(idParam(c, 'id', 'Customer'), { invite });
    return sendJson(200, customerWithPortal(result, await wireContext(c)));
  });

  app.post('/portal/customers/:id/invitations/invite.json', async (c) => {
    const { access } = await c.var.site.portalAccess.resendInvitation(idParam(c, 'id', 'Customer'));
    return sendJson(200, invitationJson(access, await wireContext(c)));
  });

  app.delete('/portal/customers/:id/invitations/revoke.json', async (c) => {
    const { access } = await c.var.site.portalAccess.revoke(idParam(c, 'id', 'Customer'));
    return sendJson(200, invitationJson(access, await wireContext(c)));
  });
}
