/**
 * The background loop of `serve` and `worker`: due work (renewals, retries, notices) then webhook
 * deliveries, in rounds of at most `batchSize` items each, then a pause when nothing is left. Each
 * round is counted in the metrics and logged. `stop()` lets the round in progress finish (so a
 * shutdown waits for at most one batch, never for a whole backlog) and starts no other.
 */
import type { BillingEngine } from 'billing-engine';
import type { OpsMetrics } from './metrics.js';
import type { OpsLogger } from './ops-logger.js';

/** Options of {@link startWorkLoop}. */
export interface WorkLoopOptions {
  /** Pause between rounds when a round found nothing more to do, in ms. */
  readonly intervalMs: number;
  /** Most due-work items, and most webhook deliveries, in one round. */
  readonly batchSize: number;
  readonly metrics: OpsMetrics;
  readonly logger: OpsLogger;
  /** Wait `intervalMs` before the first round (the server starts its loop after listening); default false. */
  readonly pauseFirst?: boolean;
}

/** A running loop. */
export interface WorkLoop {
  /** Finishes the round in progress, starts no other; resolves when the loop has ended. */
  stop(): Promise<void>;
  /** Resolves when the loop has ended. */
  readonly ended: Promise<void>;
}

/** Starts the loop over `engine`; it runs until `stop()`. */
export function startWorkLoop(
  engine: Pick<BillingEngine, 'runDue' | 'deliverWebhooks'>,
  options: WorkLoopOptions,
): WorkLoop {
  const { batchSize, metrics, logger } = options;
  let stopping = false;
  let wake: (() => void) | undefined;
  const pause = () =>
    new Promise<void>((resolve) => {
      // A referenced timer: it is what keeps an idle worker alive until the next round or a stop.
      const timer = setTimeout(resolve, options.intervalMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function loop(): Promise<void> {
    if (options.pauseFirst === true) await pause();
    while (!stopping) {
      let more = false;
      try {
        const due = await engine.runDue({ limit: batchSize });
        metrics.recordRunDue(due);
        const sent = await engine.deliverWebhooks({ limit: batchSize });
        metrics.recordDeliveries(sent);
        if (due.processed + sent.processed > 0) {
          logger.info(
            {
              due_work: due,
              webhooks: sent,
            },
            `renewed ${due.renewed}, declined ${due.declined}, errors ${due.errors}; webhooks delivered ${sent.delivered}, retried ${sent.retried}`,
          );
        }
        // A full batch may have more behind it: the next round starts at once.
        more = due.processed >= batchSize || sent.processed >= batchSize;
      } catch (error) {
        logger.error({ err: error }, 'due work failed');
      }
      if (!more && !stopping) await pause();
    }
  }

  const ended = loop();
  return {
    ended,
    stop() {
      stopping = true;
      wake?.();
      return ended;
    },
  };
}
