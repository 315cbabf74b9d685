/**
 * Seeds a large book fast, for the growth section: the subscriptions that are due in the window
 * are seeded through the storage port exactly as the runDue section seeds them
 * (`seedDueSubscriptions`), and the rest of the book (not due in the window) is bulk-inserted with
 * raw SQL, `INSERT ... SELECT` over a generated sequence (a recursive CTE on SQLite,
 * `generate_series` on Postgres), 50,000 subscriptions per transaction.
 *
 * The bulk rows are copies of the first due subscription's rows (its customer, payment profile,
 * subscription and renewal due-work row), read back with `select *` so every column the
 * migrations create is filled the way the engine filled it, with the columns that make a row
 * distinct replaced: ids, names, references, instants, keys. Each bulk subscription is active and
 * monthly, its first period ending between Feb 5 and Feb 28 2026 (after `RENEWAL_UNTIL`, Feb 1),
 * with the two due-work rows the engine keeps for it: its renewal at the period end and its
 * renewal notice three days before, both pending and both after the window. So the book grows
 * `due_work`, its indexes and every table a renewal touches, but not the work that is due.
 *
 * Due and not-due subscriptions are interleaved in `rounds` (due rows, then a slice of the book,
 * and so on), so the due ones are not all at one end of the tables.
 */
import type { Storage } from 'billing-engine';
import type { RawRow } from './raw-sql.js';
import { RENEWAL_UNTIL, type SeededSite, type SeededSubscription, seedDueSubscriptions } from './seed-subscriptions.js';

/** A raw connection for the bulk statements (no bound parameters: every value is an integer literal made here). */
export interface BulkDb {
  readonly dialect: 'sqlite' | 'postgres';
  all(text: string): Promise<readonly RawRow[]>;
  run(text: string): Promise<void>;
  /** Runs `work` in one transaction. */
  transaction(work: () => Promise<void>): Promise<void>;
}

/** Options of {@link seedGrowthBook}. */
export interface GrowthBookOptions {
  /** Subscriptions in the book, the due ones included. */
  readonly book: number;
  /** Subscriptions due in the window (renewed by `runDue({ until: RENEWAL_UNTIL })`). */
  readonly due: number;
  /** How many slices the due and the not-due subscriptions are interleaved in (default 10). */
  readonly rounds?: number;
  /** Bulk subscriptions per transaction (default 50,000). */
  readonly chunk?: number;
}

/** How long each kind of seeding took. */
export interface GrowthSeedTimes {
  readonly dueSeconds: number;
  readonly bulkSeconds: number;
}

const DAY_MS = 86_400_000;
/** First period end of a bulk subscription: Feb 5 2026 00:00 UTC plus a spread. */
const NOT_DUE_FROM_MS = Date.UTC(2026, 1, 5);
/** Period ends are spread a minute apart over 23 days (Feb 5 to Feb 27 23:59). */
const SPREAD_MINUTES = 23 * 1440;
/** A prime that shares no factor with the spread, so consecutive rows land far apart in time. */
const SPREAD_STEP = 7919;
/** Their periods started on the same day of January: 31 days earlier. */
const PERIOD_MS = 31 * DAY_MS;
const NOTICE_LEAD_MS = 3 * DAY_MS;

/** Seeds the book; the site and its product must exist (`seedSite`). */
export async function seedGrowthBook(
  storage: Storage,
  bulk: BulkDb,
  site: SeededSite,
  options: GrowthBookOptions,
): Promise<GrowthSeedTimes> {
  if (options.due < 1 || options.book < options.due)
    throw new Error('The book must hold at least the due subscriptions.');
  const rounds = Math.max(1, Math.min(options.rounds ?? 10, options.due));
  const chunk = Math.max(1, options.chunk ?? 50_000);
  const notDue = options.book - options.due;
  let dueMs = 0;
  let bulkMs = 0;
  let template: Template | undefined;
  let dueDone = 0;
  let bulkDone = 0;
  for (let round = 0; round < rounds; round++) {
    const dueEnd = Math.round((options.due * (round + 1)) / rounds);
    let start = performance.now();
    const seeded = await seedDueSubscriptions(storage, site, {
      count: dueEnd - dueDone,
      withRenewalWork: true,
      first: dueDone,
    });
    dueMs += performance.now() - start;
    dueDone = dueEnd;
    template ??= await readTemplate(bulk, site, seeded[0]!);
    const bulkEnd = Math.round((notDue * (round + 1)) / rounds);
    start = performance.now();
    for (let from = bulkDone; from < bulkEnd; from += chunk) {
      const count = Math.min(chunk, bulkEnd - from);
      await bulk.transaction(() => insertNotDue(bulk, template!, from, count));
    }
    if (bulk.dialect === 'postgres' && bulkEnd > bulkDone) await advanceIdentities(bulk);
    bulkMs += performance.now() - start;
    bulkDone = bulkEnd;
  }
  return { dueSeconds: dueMs / 1000, bulkSeconds: bulkMs / 1000 };
}

/** The rows the bulk rows are copies of, with their column names. */
interface Template {
  readonly siteId: number;
  readonly customerId: number;
  readonly profileId: number;
  readonly subscriptionId: number;
  readonly workId: number;
  /** The version every copied subscription has (it names its renewal keys). */
  readonly version: number;
  readonly columns: Readonly<Record<'customers' | 'payment_profiles' | 'subscriptions' | 'due_work', string[]>>;
}

async function readTemplate(bulk: BulkDb, site: SeededSite, first: SeededSubscription): Promise<Template> {
  const one = async (text: string) => {
    const [row] = await bulk.all(text);
    if (row === undefined) throw new Error(`Growth seeding: no template row for ${text}`);
    return row;
  };
  const siteId = int(site.siteId);
  const customer = await one(`select * from customers where site_id = ${siteId} and id = ${int(first.customerId)}`);
  const profile = await one(
    `select * from payment_profiles where site_id = ${siteId} and id = ${int(first.paymentProfileId)}`,
  );
  const subscription = await one(`select * from subscriptions where site_id = ${siteId} and id = ${int(first.id)}`);
  const work = await one(
    `select * from due_work where site_id = ${siteId} and subject_id = ${int(first.id)} and kind = 'renewal'`,
  );
  return {
    siteId,
    customerId: first.customerId,
    profileId: first.paymentProfileId,
    subscriptionId: first.id,
    workId: Number(work.id),
    version: Number(subscription.version),
    columns: {
      customers: Object.keys(customer),
      payment_profiles: Object.keys(profile),
      subscriptions: Object.keys(subscription),
      due_work: Object.keys(work),
    },
  };
}

/** Inserts `count` not-due subscriptions numbered `from`, `from + 1`, ... with their customers, cards and due work. */
async function insertNotDue(bulk: BulkDb, template: Template, from: number, count: number): Promise<void> {
  const pg = bulk.dialect === 'postgres';
  const base = async (table: string) => {
    const [row] = await bulk.all(`select coalesce(max(id), 0) as id from ${table}`);
    return Number(row?.id ?? 0);
  };
  const customerBase = await base('customers');
  const profileBase = await base('payment_profiles');
  const subscriptionBase = await base('subscriptions');
  const workBase = await base('due_work');
  // `n` runs from 0 to count - 1; `g` numbers the subscription within the whole book.
  const seq = pg
    ? `generate_series(0::bigint, ${int(count - 1)}::bigint) as s(n)`
    : `(with recursive seq(n) as (select 0 union all select n + 1 from seq where n < ${int(count - 1)}) select n from seq) as s`;
  const g = `(${int(from)} + s.n)`;
  const endMs = `(${NOT_DUE_FROM_MS} + ((${g} * ${SPREAD_STEP}) % ${SPREAD_MINUTES}) * 60000)`;
  const anchorMs = `(${endMs} - ${PERIOD_MS})`;
  const noticeMs = `(${endMs} - ${NOTICE_LEAD_MS})`;
  const instant = (ms: string) => (pg ? `(timestamptz 'epoch' + (${ms}) * interval '1 millisecond')` : ms);
  const customerId = `(${int(customerBase)} + 1 + s.n)`;
  const subscriptionId = `(${int(subscriptionBase)} + 1 + s.n)`;
  const where = (id: number) => `tpl.site_id = ${template.siteId} and tpl.id = ${int(id)}`;

  await bulk.run(
    copy(template.columns.customers, 'customers', seq, where(template.customerId), {
      id: customerId,
      last_name: `'Growth ' || ${g}`,
      email: `'growth' || ${g} || '@example.com'`,
      reference: `'growth-' || ${g}`,
      created_at: instant(anchorMs),
      updated_at: instant(anchorMs),
    }),
  );
  await bulk.run(
    copy(template.columns.payment_profiles, 'payment_profiles', seq, where(template.profileId), {
      id: `(${int(profileBase)} + 1 + s.n)`,
      customer_id: customerId,
      last_name: `'Growth ' || ${g}`,
      created_at: instant(anchorMs),
      updated_at: instant(anchorMs),
    }),
  );
  await bulk.run(
    copy(template.columns.subscriptions, 'subscriptions', seq, where(template.subscriptionId), {
      id: subscriptionId,
      customer_id: customerId,
      payment_profile_id: `(${int(profileBase)} + 1 + s.n)`,
      period_anchor_at: instant(anchorMs),
      current_period_started_at: instant(anchorMs),
      current_period_ends_at: instant(endMs),
      next_assessment_at: instant(endMs),
      activated_at: instant(anchorMs),
      created_at: instant(anchorMs),
      updated_at: instant(anchorMs),
    }),
  );
  // The engine's keys: `renewal:<id>:<next>@<dueMs>/v<version>` and `notice:<id>:...` (renewal-schedule.ts).
  const suffix = `':1@' || ${endMs} || '/v${int(template.version)}'`;
  const iso = pg
    ? `to_char(${instant(endMs)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : `strftime('%Y-%m-%dT%H:%M:%fZ', ${endMs} / 1000.0, 'unixepoch')`;
  const work = (kind: 'renewal' | 'notice', offset: number, dueMs: string, payload: string) =>
    copy(template.columns.due_work, 'due_work', seq, where(template.workId), {
      id: `(${int(workBase)} + ${offset} + 2 * s.n)`,
      kind: `'${kind}'`,
      subject_id: subscriptionId,
      due_at: instant(dueMs),
      unique_key: `'${kind}:' || ${subscriptionId} || ${suffix}`,
      payload,
      status: `'pending'`,
      claimed_by: 'null',
      lease_until: 'null',
      attempts: '0',
      // `schedule` stamps a row with its due instant.
      created_at: instant(dueMs),
      updated_at: instant(dueMs),
    });
  await bulk.run(work('renewal', 1, endMs, pg ? `'{"periodIndex": 1}'::jsonb` : `'{"periodIndex":1}'`));
  await bulk.run(
    work(
      'notice',
      2,
      noticeMs,
      pg
        ? `jsonb_build_object('periodIndex', 1, 'renewalAt', ${iso}, 'trial', false)`
        : `'{"periodIndex":1,"renewalAt":"' || ${iso} || '","trial":false}'`,
    ),
  );
}

/** `insert into table (every column) select <the template's value or the override> from seq, template`. */
function copy(
  columns: readonly string[],
  table: string,
  seq: string,
  where: string,
  overrides: Readonly<Record<string, string>>,
): string {
  for (const name of Object.keys(overrides)) {
    if (!columns.includes(name)) throw new Error(`Growth seeding: ${table} has no column ${name}.`);
  }
  const values = columns.map((c) => overrides[c] ?? `tpl.${c}`);
  return `insert into ${table} (${columns.join(', ')}) select ${values.join(', ')} from ${seq} cross join ${table} as tpl where ${where}`;
}

/** Postgres identity columns do not move when ids are given: move them past the bulk ids. */
async function advanceIdentities(bulk: BulkDb): Promise<void> {
  for (const table of ['customers', 'payment_profiles', 'subscriptions', 'due_work']) {
    await bulk.run(
      `select setval(pg_get_serial_sequence('${table}', 'id'), (select coalesce(max(id), 1) from ${table}))`,
    );
  }
}

function int(value: number): number {
  if (!Number.isSafeInteger(value)) throw new Error(`Growth seeding: ${value} is not an integer.`);
  return value;
}

/** Expected end of the bulk subscriptions' first period, for checks: always after the window. */
export const GROWTH_NOT_DUE_FROM = new Date(NOT_DUE_FROM_MS);
if (NOT_DUE_FROM_MS - NOTICE_LEAD_MS <= RENEWAL_UNTIL.getTime()) {
  throw new Error('Growth seeding: bulk notices would be due in the window.');
}
