/**
 * The engine the CLI's `serve` and `worker` run. The CLI has no real gateway to offer, so it is
 * the built-in test gateway, counted and timed in the ops metrics; and, as for any engine built
 * without a gateway, a live site's payments are refused (naming the option) before any gateway is
 * called: wrapping the test gateway for metrics must not turn it into a silent live gateway.
 */
import {
  type BillingEngine,
  createBillingEngine,
  createTestGateway,
  refusingLiveSitePayments,
  type Storage,
  sitePortalOrigin,
} from 'billing-engine';
import { createDemoMailer } from '../examples/http/demo-mailer.js';
import { instrumentGateway } from '../examples/http/ops/instrumented-gateway.js';
import type { OpsMetrics } from '../examples/http/ops/metrics.js';
import type { OpsLogger } from '../examples/http/ops/ops-logger.js';

/**
 * Mail of the CLI's engine: like the example server's, logged (and written under
 * `BILLING_MAIL_DIR` when set) and never sent, so that sending an invoice or a portal invitation
 * works on `npm start`; links in it point at `baseDomain`, the public origin portal links use.
 */
export interface CliMail {
  readonly logger: Pick<OpsLogger, 'info'>;
  readonly baseDomain: string;
}

export function cliEngine(
  storage: Storage,
  metrics: OpsMetrics,
  allowLocalReceivers: boolean,
  mail?: CliMail,
): BillingEngine {
  const directory = process.env.BILLING_MAIL_DIR;
  return createBillingEngine({
    storage: refusingLiveSitePayments(storage),
    webhooks: { allowLocalReceivers },
    gateway: instrumentGateway(createTestGateway(), metrics),
    ...(mail === undefined
      ? {}
      : {
          mail: {
            mailer: createDemoMailer({ logger: mail.logger, ...(directory ? { directory } : {}) }),
            siteOrigin: (subdomain: string) => sitePortalOrigin(subdomain, mail.baseDomain),
          },
        }),
  });
}
