/**
 * A decorator around the PaymentGateway port that counts and times every call by operation and
 * outcome. The server and the worker wrap the gateway they give the engine in it; the engine sees
 * the same port and the same results, and a call that throws is counted (`outcome="threw"`) and
 * rethrown unchanged. Nothing of the request (card, token, amount) becomes a label.
 */
import { performance } from 'node:perf_hooks';
import type { ChargeResult, PaymentGateway } from 'billing-engine';
import type { OpsMetrics } from './metrics.js';

type Operation = 'tokenize' | 'charge' | 'refund' | 'lookup';

/** `gateway` with every call counted and timed in `metrics`. */
export function instrumentGateway(gateway: PaymentGateway, metrics: OpsMetrics): PaymentGateway {
  async function timed<T>(operation: Operation, call: () => Promise<T>, outcomeOf: (result: T) => string): Promise<T> {
    // Latency is operations data, not billing time: the engine's Clock is not involved.
    const started = performance.now();
    let outcome = 'threw';
    try {
      const result = await call();
      outcome = outcomeOf(result);
      return result;
    } finally {
      const labels = { operation, outcome };
      metrics.gatewayCalls.inc(labels);
      metrics.gatewayDuration.observe(labels, (performance.now() - started) / 1000);
    }
  }
  return {
    get name() {
      return gateway.name;
    },
    get supportsRefunds() {
      return gateway.supportsRefunds;
    },
    tokenize: (card) =>
      timed(
        'tokenize',
        () => gateway.tokenize(card),
        (r) => (r.ok ? 'success' : 'refused'),
      ),
    charge: (request) =>
      timed(
        'charge',
        () => gateway.charge(request),
        (r) => r.outcome,
      ),
    refund: (request) =>
      timed(
        'refund',
        () => gateway.refund(request),
        (r) => r.outcome,
      ),
    lookup: (key) =>
      timed(
        'lookup',
        () => gateway.lookup(key),
        (r: ChargeResult | undefined) => r?.outcome ?? 'not_found',
      ),
  };
}
