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
} from 'billing-engine';
import { instrumentGateway } from '../examples/http/ops/instrumented-gateway.js';
import type { OpsMetrics } from '../examples/http/ops/metrics.js';

export function cliEngine(storage: Storage, metrics: OpsMetrics, allowLocalReceivers: boolean): BillingEngine {
  return createBillingEngine({
    storage: refusingLiveSitePayments(storage),
    webhooks: { allowLocalReceivers },
    gateway: instrumentGateway(createTestGateway(), metrics),
  });
}
