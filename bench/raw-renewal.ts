/**
 * The raw baseline of a renewal: the statements the engine runs for one successful renewal of an
 * active monthly subscription (traced from the SQL adapter with better-sqlite3's `verbose`), in the
 * same transactions, with plain driver calls and no engine code around them:
 *
 * - per batch of 100: claim due work (one CTE + UPDATE ... RETURNING; `FOR UPDATE SKIP LOCKED` on Postgres);
 * - step 1 (one transaction): look up the payment attempt by key; read the site, the subscription,
 *   its product version, the site again and its components; advance the period (UPDATE at
 *   version ... RETURNING); add the charge to the running balance (UPDATE ... RETURNING); insert the
 *   charge ledger line; read the balance; insert the pending payment attempt;
 * - step 2 (one transaction): read the subscription and its payment profile (the gateway is
 *   not called: the raw baseline writes rows only);
 * - step 3 (one transaction): read the site and subscription; take the payment off the balance;
 *   insert the payment ledger line; mark the attempt succeeded; cancel pending dunning retries;
 *   schedule the next renewal and its notice; complete the due-work row; on Postgres take the
 *   per-site outbox lock; insert the `payment_success` and `renewal_success` outbox events; read
 *   the site and its webhook endpoints (the webhook fan-out finds none).
 *
 * Status lists (`status in ('pending', 'claimed')`) are literals, as the partial indexes'
 * predicates are and as hand-written SQL would be; the adapter now writes them the same way
 * (docs/decisions.md, "Partial indexes"), so on SQLite both the claim and the cancel of dunning
 * retries use the partial indexes (section 5 prints the claim's plan). The kinds are literals
 * here and bound parameters in the adapter, which does not change the plan.
 */
import { addMonthsUtc, BEGIN, COMMIT, query, type RawDialect, type RawRow, type RawWork } from './raw-sql.js';

/** What a raw renewal run needs to know. */
export interface RawRenewalOptions {
  readonly until: Date;
  /** Written to `claimed_by`; distinct per concurrent worker. */
  readonly owner: string;
  /** Due rows per claim (the engine's default is 100). */
  readonly batchSize: number;
  /** Lease written by the claim, as the engine does (5 minutes). */
  readonly leaseMs: number;
  /** `performance.now()` after which no new batch is claimed (the time box); none by default. */
  readonly deadline?: number;
  /**
   * Renewals whose steps share transactions (default 1: three transactions per renewal). With n,
   * the first steps of n renewals run in one transaction, then their second steps, then their
   * third: the minimal writes batched the way the engine's group commit batches them (issue 18).
   */
  readonly perTransaction?: number;
}

/** The kinds of due work the engine's `runDue` claims (`HANDLED_KINDS` in renewal-service.ts). */
export const ENGINE_CLAIM_KINDS = [
  'renewal',
  'auto_resume',
  'dunning_retry',
  'notice',
  'reconcile_payment',
  'expiring_card_scan',
] as const;

const HANDLED_KINDS = `(${ENGINE_CLAIM_KINDS.map((kind) => `'${kind}'`).join(', ')})`;
const NOTICE_LEAD_MS = 3 * 86_400_000;

const LEDGER_INSERT =
  'insert into ledger_transactions (site_id, subscription_id, customer_id, type, kind, amount_in_cents, memo, success, ' +
  'starting_balance_in_cents, ending_balance_in_cents, payment_id, product_id, component_id, period_index, ' +
  'gateway_transaction_id, refunded_amount_in_cents, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning *';

const DUE_WORK_INSERT =
  'insert into due_work (site_id, kind, subject_id, due_at, unique_key, payload, status, claimed_by, lease_until, ' +
  "attempts, created_at, updated_at) values (?, ?, ?, ?, ?, ?, 'pending', null, null, 0, ?, ?) " +
  'on conflict (site_id, unique_key) do nothing returning *';

/** The claim statement of the SQL adapter, in the same shape: pick in `(due_at, id)` order, then mark. */
export function claimStatement(dialect: RawDialect): string {
  return (
    'with picked as materialized (select site_id, id from due_work ' +
    "where status in ('pending', 'claimed') and (status = 'pending' or (status = 'claimed' and lease_until <= ?)) " +
    `and due_at <= ? and kind in ${HANDLED_KINDS} order by due_at, id limit ?` +
    (dialect.name === 'postgres' ? ' for update skip locked' : '') +
    ") update due_work set status = 'claimed', claimed_by = ?, lease_until = ?, updated_at = ? " +
    'where (site_id, id) in (select site_id, id from picked) returning *'
  );
}

/** Renews everything due up to `until`, batch by batch; returns how many renewals it did. */
export function* rawRenewalRun(dialect: RawDialect, options: RawRenewalOptions): RawWork<number> {
  let renewed = 0;
  const claim = claimStatement(dialect);
  for (;;) {
    if (options.deadline !== undefined && performance.now() >= options.deadline) return renewed;
    // The engine's worker uses the clock's now (here: `until`) for the lease.
    const now = options.until.getTime();
    yield BEGIN;
    const batch = yield query(claim, [
      dialect.instant(now),
      dialect.instant(options.until.getTime()),
      options.batchSize,
      options.owner,
      dialect.instant(now + options.leaseMs),
      dialect.instant(now),
    ]);
    yield COMMIT;
    if (batch.length === 0) return renewed;
    const ordered = [...batch].sort(
      (a, b) => dialect.ms(a.due_at) - dialect.ms(b.due_at) || dialect.int(a.id) - dialect.int(b.id),
    );
    const group = Math.max(1, options.perTransaction ?? 1);
    for (let at = 0; at < ordered.length; at += group) {
      const items = ordered.slice(at, at + group);
      if (items.length === 1) yield* rawRenewal(dialect, items[0]!, options.owner);
      else yield* batchedRenewals(dialect, items, options.owner);
      renewed += items.length;
    }
  }
}

/**
 * Several renewals whose steps share transactions: each renewal's statements are exactly those of
 * {@link rawRenewal}, but its first steps all run in one transaction, then its second steps, then
 * its third (each renewal's own BEGIN and COMMIT are left out; one pair per step is sent).
 */
export function* batchedRenewals(dialect: RawDialect, items: readonly RawRow[], owner: string): RawWork<void> {
  const runs = items.map((item) => {
    const work = rawRenewal(dialect, item, owner);
    return { work, next: work.next() };
  });
  while (runs.some((run) => !run.next.done)) {
    yield BEGIN;
    for (const run of runs) {
      while (!run.next.done) {
        const op = run.next.value;
        if (op === BEGIN) {
          run.next = run.work.next([]);
          continue;
        }
        // Its step ends here; the next op (its next step's BEGIN, or the end) is already fetched.
        run.next = run.work.next(op === COMMIT ? [] : yield op);
        if (op === COMMIT) break;
      }
    }
    yield COMMIT;
  }
}

/** One renewal of one claimed due-work row: the three transactions described above. */
export function* rawRenewal(dialect: RawDialect, item: RawRow, owner: string): RawWork<void> {
  const siteId = dialect.int(item.site_id);
  const subscriptionId = dialect.int(item.subject_id);
  const workId = dialect.int(item.id);
  // Every row a renewal writes carries the item's due instant, as in the engine.
  const at = dialect.ms(item.due_at);
  const periodIndex = Number(dialect.json(item.payload).periodIndex);
  const key = `renewal:${subscriptionId}:${periodIndex}`;

  // Step 1: charge the new period and commit a pending payment attempt.
  yield BEGIN;
  yield query('select * from payment_attempts where site_id = ? and idempotency_key = ?', [siteId, key]);
  const [site] = yield query('select * from sites where id = ?', [siteId]);
  const [subscription] = yield query('select * from subscriptions where site_id = ? and id = ?', [
    siteId,
    subscriptionId,
  ]);
  if (site === undefined || subscription === undefined)
    throw new Error(`Raw renewal: subscription ${subscriptionId} is missing.`);
  const [version] = yield query('select * from product_versions where site_id = ? and product_id = ? and version = ?', [
    siteId,
    subscription.product_id,
    subscription.product_version,
  ]);
  if (version === undefined) throw new Error('Raw renewal: product version is missing.');
  const terms = dialect.json(version.terms);
  const price = Number(terms.priceInCents);
  yield query('select * from sites where id = ?', [siteId]);
  yield query('select * from subscription_components where site_id = ? and subscription_id = ? order by component_id', [
    siteId,
    subscriptionId,
  ]);
  const anchor = dialect.ms(subscription.period_anchor_at);
  const start = addMonthsUtc(anchor, periodIndex);
  const end = addMonthsUtc(anchor, periodIndex + 1);
  const [advanced] = yield query(
    'update subscriptions set state = ?, period_index = ?, current_period_started_at = ?, current_period_ends_at = ?, ' +
      'next_assessment_at = ?, activated_at = ?, updated_at = ?, version = version + 1 ' +
      'where site_id = ? and id = ? and version = ? returning *',
    [
      'active',
      periodIndex,
      dialect.instant(start),
      dialect.instant(end),
      dialect.instant(end),
      subscription.activated_at === null ? dialect.instant(at) : subscription.activated_at,
      dialect.instant(at),
      siteId,
      subscriptionId,
      subscription.version,
    ],
  );
  if (advanced === undefined) throw new Error(`Raw renewal: subscription ${subscriptionId} changed.`);
  const customerId = dialect.int(subscription.customer_id);
  const productId = dialect.int(subscription.product_id);
  const [afterCharge] = yield query(
    'update subscriptions set balance_in_cents = balance_in_cents + ? where site_id = ? and id = ? returning balance_in_cents',
    [price, siteId, subscriptionId],
  );
  const chargeEnding = dialect.int(afterCharge?.balance_in_cents);
  const memo = `${String(terms.name)} (${new Date(start).toISOString().slice(0, 10)} - ${new Date(end).toISOString().slice(0, 10)})`;
  yield query(LEDGER_INSERT, [
    siteId,
    subscriptionId,
    customerId,
    'charge',
    'baseline',
    price,
    memo,
    null,
    chargeEnding - price,
    chargeEnding,
    null,
    productId,
    null,
    periodIndex,
    null,
    0,
    dialect.instant(at),
  ]);
  const [balanceRow] = yield query('select balance_in_cents from subscriptions where site_id = ? and id = ?', [
    siteId,
    subscriptionId,
  ]);
  const balance = dialect.int(balanceRow?.balance_in_cents);
  const [attempt] = yield query(
    'insert into payment_attempts (site_id, subscription_id, customer_id, idempotency_key, amount_in_cents, currency, ' +
      'purpose, status, gateway_transaction_id, message, transaction_id, created_at, updated_at) ' +
      "values (?, ?, ?, ?, ?, ?, 'renewal', 'pending', null, null, null, ?, ?) " +
      'on conflict (site_id, idempotency_key) do nothing returning *',
    [siteId, subscriptionId, customerId, key, balance, String(site.currency), dialect.instant(at), dialect.instant(at)],
  );
  if (attempt === undefined) throw new Error(`Raw renewal: payment key ${key} is taken.`);
  yield COMMIT;

  // Step 2: the payment profile to charge (the engine reads it in a transaction of its own).
  yield BEGIN;
  yield query('select * from subscriptions where site_id = ? and id = ?', [siteId, subscriptionId]);
  yield query('select * from payment_profiles where site_id = ? and id = ?', [siteId, subscription.payment_profile_id]);
  yield COMMIT;
  const gatewayTransactionId = `raw_${attempt.id}`;

  // Step 3: settle: payment line, attempt, next renewal and notice, completion, events.
  yield BEGIN;
  yield query('select * from sites where id = ?', [siteId]);
  yield query('select * from subscriptions where site_id = ? and id = ?', [siteId, subscriptionId]);
  const [afterPayment] = yield query(
    'update subscriptions set balance_in_cents = balance_in_cents + ? where site_id = ? and id = ? returning balance_in_cents',
    [-balance, siteId, subscriptionId],
  );
  const paymentEnding = dialect.int(afterPayment?.balance_in_cents);
  const [payment] = yield query(LEDGER_INSERT, [
    siteId,
    subscriptionId,
    customerId,
    'payment',
    null,
    balance,
    'Payment for renewal',
    dialect.bool(true),
    paymentEnding + balance,
    paymentEnding,
    null,
    productId,
    null,
    null,
    gatewayTransactionId,
    0,
    dialect.instant(at),
  ]);
  yield query(
    "update payment_attempts set status = 'succeeded', gateway_transaction_id = ?, transaction_id = ?, updated_at = ? " +
      'where site_id = ? and id = ? returning *',
    [gatewayTransactionId, payment?.id, dialect.instant(at), siteId, attempt.id],
  );
  yield query(
    "update due_work set status = 'canceled', updated_at = ? where site_id = ? and subject_id = ? and status in ('pending', 'claimed') and kind in ('dunning_retry')",
    [dialect.instant(at), siteId, subscriptionId],
  );
  const nextIndex = periodIndex + 1;
  const suffix = `${nextIndex}@${end}/v${dialect.int(advanced.version)}`;
  yield query(DUE_WORK_INSERT, [
    siteId,
    'renewal',
    subscriptionId,
    dialect.instant(end),
    `renewal:${subscriptionId}:${suffix}`,
    JSON.stringify({ periodIndex: nextIndex }),
    dialect.instant(end),
    dialect.instant(end),
  ]);
  const noticeAt = end - NOTICE_LEAD_MS;
  if (noticeAt > at) {
    yield query(DUE_WORK_INSERT, [
      siteId,
      'notice',
      subscriptionId,
      dialect.instant(noticeAt),
      `notice:${subscriptionId}:${suffix}`,
      JSON.stringify({ periodIndex: nextIndex, renewalAt: new Date(end).toISOString(), trial: false }),
      dialect.instant(noticeAt),
      dialect.instant(noticeAt),
    ]);
  }
  yield query(
    "update due_work set status = 'done', lease_until = null, updated_at = ? where site_id = ? and id = ? and status = 'claimed' and claimed_by = ?",
    [dialect.instant(at), siteId, workId, owner],
  );
  if (dialect.name === 'postgres') {
    yield query("select pg_advisory_xact_lock(hashtextextended(? || coalesce(current_schema(), ''), 0))", [
      `billing-engine:outbox:${siteId}:`,
    ]);
  }
  const state = { subscription: { id: subscriptionId, state: 'active' } };
  yield query(
    'insert into outbox_events (site_id, key, subject_type, subject_id, payload, occurred_at) values (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?) returning *',
    [
      siteId,
      'payment_success',
      'subscription',
      subscriptionId,
      JSON.stringify({ ...state, transaction: { id: dialect.int(payment?.id), amount_in_cents: balance } }),
      dialect.instant(at),
      siteId,
      'renewal_success',
      'subscription',
      subscriptionId,
      JSON.stringify(state),
      dialect.instant(at),
    ],
  );
  yield query('select * from sites where id = ?', [siteId]);
  yield query('select * from webhook_endpoints where site_id = ? order by id', [siteId]);
  yield COMMIT;
}
