/**
 * The Prometheus metrics of one HTTP app or worker, in a registry of its own (never prom-client's
 * global default), so that two apps in one process keep separate counts and never clash over a
 * metric name. Labels have bounded values only: route patterns (never raw paths, which carry ids
 * and tokens), status codes, due-work kinds and outcomes, gateway operations; never a site, since
 * sites are unbounded and a site's name is its customer's business.
 */
import type { BillingEngine, DeliverySummary, DueWorkKind, RunDueSummary } from 'billing-engine';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The due-work kind of a webhook delivery: counted as pending webhooks, not as due work. */
const WEBHOOK_DELIVERY: DueWorkKind = 'webhook_delivery';

/** The numbers the backlog gauges show, read at scrape time. */
export interface Backlog {
  /** Due work (renewals, retries, notices, ...) due now and not yet processed. */
  readonly dueWork: number;
  /** Webhook deliveries due now and not yet sent (first attempts and retries). */
  readonly webhooksPending: number;
}

/** Options of {@link createOpsMetrics}. */
export interface OpsMetricsOptions {
  /** Also collect the process metrics (CPU, memory, event loop lag) prom-client offers; default false. */
  readonly processMetrics?: boolean;
}

/** The latency buckets of HTTP requests and gateway calls, in seconds: 5 ms to 10 s. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * How each count of a {@link RunDueSummary} reads as a (kind, outcome) pair. The summary counts
 * outcomes, not kinds; where an outcome belongs to one kind of work the kind is named, and the
 * payment outcomes (renewals and dunning retries alike) are of kind `payment`.
 */
const DUE_WORK_OUTCOMES: readonly {
  readonly field: Exclude<keyof RunDueSummary, 'processed'>;
  readonly kind: string;
  readonly outcome: string;
}[] = [
  { field: 'notices', kind: 'notice', outcome: 'recorded' },
  { field: 'scans', kind: 'expiring_card_scan', outcome: 'scanned' },
  { field: 'renewed', kind: 'renewal', outcome: 'renewed' },
  { field: 'recovered', kind: 'dunning_retry', outcome: 'recovered' },
  { field: 'declined', kind: 'payment', outcome: 'declined' },
  { field: 'failed', kind: 'payment', outcome: 'failed' },
  { field: 'errors', kind: 'any', outcome: 'error' },
];

const DELIVERY_OUTCOMES: readonly (keyof Omit<DeliverySummary, 'processed'>)[] = [
  'delivered',
  'retried',
  'gaveUp',
  'skipped',
  'errors',
];

/** The metrics of one app or worker and the registry that exposes them. */
export class OpsMetrics {
  /** The registry `/metrics` serves; this app's own. */
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly dueWorkProcessed: Counter<'kind' | 'outcome'>;
  readonly dueWorkItems: Counter;
  readonly gatewayCalls: Counter<'operation' | 'outcome'>;
  readonly gatewayDuration: Histogram<'operation' | 'outcome'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  #backlog: (() => Promise<Backlog>) | undefined;
  // One read serves both gauges of a scrape.
  #pendingRead: Promise<Backlog | undefined> | undefined;

  constructor(options: OpsMetricsOptions = {}) {
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving an HTTP request to its response, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.dueWorkProcessed = new Counter({
      name: 'billing_due_work_processed_total',
      help: 'Due work items processed by runDue, by kind and outcome.',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.dueWorkItems = new Counter({
      name: 'billing_due_work_items_total',
      help: 'Due work items processed by runDue, whatever came of them.',
      registers,
    });
    this.gatewayCalls = new Counter({
      name: 'billing_gateway_calls_total',
      help: 'Payment gateway calls, by operation (tokenize, charge, refund, lookup) and outcome.',
      labelNames: ['operation', 'outcome'],
      registers,
    });
    this.gatewayDuration = new Histogram({
      name: 'billing_gateway_call_duration_seconds',
      help: 'Payment gateway call latency, by operation and outcome.',
      labelNames: ['operation', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'billing_webhook_deliveries_total',
      help: 'Webhook deliveries attempted, by outcome (delivered, retried, gave_up, skipped, error).',
      labelNames: ['outcome'],
      registers,
    });
    const metrics = this;
    new Gauge({
      name: 'billing_due_work_backlog',
      help: 'Due work items due now and not yet processed, read at scrape time.',
      registers,
      async collect() {
        const backlog = await metrics.#readBacklog();
        if (backlog !== undefined) this.set(backlog.dueWork);
      },
    });
    new Gauge({
      name: 'billing_webhooks_pending',
      help: 'Webhook deliveries due now and not yet sent, read at scrape time.',
      registers,
      async collect() {
        const backlog = await metrics.#readBacklog();
        if (backlog !== undefined) this.set(backlog.webhooksPending);
      },
    });
    if (options.processMetrics === true) collectDefaultMetrics({ register: this.registry });
  }

  /** Where the backlog gauges read their numbers at each scrape (the app or worker's engine). */
  readBacklogFrom(read: () => Promise<Backlog>): void {
    this.#backlog = read;
  }

  /** Counts what one `runDue` call did. */
  recordRunDue(summary: RunDueSummary): void {
    if (summary.processed > 0) this.dueWorkItems.inc(summary.processed);
    for (const { field, kind, outcome } of DUE_WORK_OUTCOMES) {
      if (summary[field] > 0) this.dueWorkProcessed.inc({ kind, outcome }, summary[field]);
    }
  }

  /** Counts what one `deliverWebhooks` call did. */
  recordDeliveries(summary: DeliverySummary): void {
    for (const field of DELIVERY_OUTCOMES) {
      const outcome = field === 'gaveUp' ? 'gave_up' : field === 'errors' ? 'error' : field;
      if (summary[field] > 0) this.webhookDeliveries.inc({ outcome }, summary[field]);
    }
  }

  /** The exposition text of every metric, the backlog read afresh. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  #readBacklog(): Promise<Backlog | undefined> {
    const read = this.#backlog;
    if (read === undefined) return Promise.resolve(undefined);
    if (this.#pendingRead === undefined) {
      // A storage that cannot answer leaves the gauges at their last values; readiness reports it.
      this.#pendingRead = read()
        .catch(() => undefined)
        .finally(() => {
          this.#pendingRead = undefined;
        });
    }
    return this.#pendingRead;
  }
}

/** A fresh set of metrics in a registry of its own. */
export function createOpsMetrics(options: OpsMetricsOptions = {}): OpsMetrics {
  return new OpsMetrics(options);
}

/** The backlog of an engine as the gauges show it: due work and webhook deliveries due now. */
export function engineBacklog(engine: Pick<BillingEngine, 'countDue' | 'storage' | 'clock'>): () => Promise<Backlog> {
  return async () => {
    const [dueWork, webhooksPending] = await Promise.all([
      engine.countDue(),
      engine.storage.transaction((tx) => tx.dueWork.countDue({ until: engine.clock.now(), kinds: [WEBHOOK_DELIVERY] })),
    ]);
    return { dueWork, webhooksPending };
  };
}
