import {
  type BillingEngine,
  type BillingEvent,
  createBillingEngine,
  createTestGateway,
  ManualClock,
  type Storage,
} from 'billing-engine';

/** One month of a simulation: what the book looked like at its end and what happened in it. */
export interface SimulationMonth {
  /** `YYYY-MM` of the month's first day on the simulation clock. */
  readonly month: string;
  /** Monthly recurring revenue at the month's end, at list price: active subscriptions' product and seats. */
  readonly mrrInCents: number;
  readonly active: number;
  /** Signups in the month. */
  readonly signups: number;
  /** Subscriptions cancelled or expired in the month. */
  readonly churned: number;
  /** Renewals into a new period. */
  readonly renewals: number;
  /** Declined charges (renewals and dunning retries). */
  readonly declined: number;
  /** Dunning retries that collected what a decline had left unpaid. */
  readonly recovered: number;
  /** Payments taken in the month. */
  readonly revenueInCents: number;
}

/** What a simulation did. */
export interface SimulationSummary {
  readonly subscriptions: number;
  readonly months: number;
  readonly renewals: number;
  readonly declines: number;
  readonly revenueInCents: number;
  readonly churned: number;
  readonly active: number;
  readonly seconds: number;
  /** Month by month, in order: what the terminal table and the HTML chart show. */
  readonly monthly: readonly SimulationMonth[];
}

/** Options of {@link simulate}. */
export interface SimulationOptions {
  /** The book at the start. */
  readonly subscriptions: number;
  readonly months: number;
  /** New subscriptions signed up at the start of each later month (default 0). */
  readonly growth?: number;
}

/**
 * Generates a book of subscriptions (two products, one with a trial; a coupon on some; seats on
 * some; every tenth card declines its renewals, and another tenth declines its first renewal once
 * and is recovered by dunning) on a manual clock, signs up `growth` more each month, and bills it
 * for `months` months, so an operator can see what the engine and a site's settings do to a book,
 * month by month, and how fast it runs on their storage.
 */
export async function simulate(storage: Storage, options: SimulationOptions): Promise<SimulationSummary> {
  const clock = new ManualClock('2026-01-01T09:00:00Z');
  const gateway = createTestGateway();
  const engine: BillingEngine = createBillingEngine({ storage, clock, gateway });
  await engine.migrate();
  const subdomain = `sim${Date.now().toString(36)}`;
  await engine.sites.create({
    subdomain,
    currency: 'USD',
    timeZone: 'America/Chicago',
    settings: { dunning: { retryCount: 2, retryIntervalHours: 24, finalAction: 'canceled' } },
  });
  const site = engine.site(subdomain);
  const family = await site.catalog.createFamily({ name: 'Simulated' });
  await site.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1900,
    interval: 1,
    intervalUnit: 'month',
  });
  await site.catalog.createProduct(family.id, {
    name: 'Team',
    handle: 'team',
    priceInCents: 9900,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  const seats = await site.components.create(family.id, {
    kind: 'quantity_based_component',
    name: 'Seats',
    unitName: 'seat',
    pricingScheme: 'per_unit',
    unitPrice: '4.00',
  });
  await site.coupons.create({
    name: 'Launch',
    code: 'LAUNCH',
    percentage: '15',
    recurring: true,
    durationPeriodCount: 3,
    productFamilyId: family.id,
  });
  // What each month saw, from the engine's committed events (the same ones webhooks carry).
  const tally = { signups: 0, churned: 0, revenueInCents: 0 };
  const stopListening = engine.on('*', (event: BillingEvent) => {
    if (event.key === 'signup_success') tally.signups += 1;
    else if (event.key === 'payment_success') tally.revenueInCents += amountOf(event);
    else if (event.key === 'subscription_state_change') {
      const state = (event.payload.subscription as { state?: string } | undefined)?.state;
      if (state === 'cancelled' || state === 'expired') tally.churned += 1;
    }
  });
  // List price per month of each subscription (product, plus seats at 4.00), for MRR.
  const listPrice = new Map<number, number>();
  let signedUp = 0;
  const signUp = async (count: number) => {
    for (let n = 0; n < count; n++) {
      const i = signedUp++;
      const team = i % 3 === 0;
      const seatCount = 1 + (i % 5);
      const created = await site.subscriptions.create({
        productHandle: team ? 'team' : 'basic',
        customer: { firstName: 'Sim', lastName: `Customer ${i}`, email: `sim${i}@example.com` },
        creditCard: { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2040 },
        ...(i % 4 === 0 ? { couponCode: 'LAUNCH' } : {}),
        ...(team ? { components: [{ componentId: seats.component.id, allocatedQuantity: seatCount }] } : {}),
      });
      listPrice.set(created.subscription.id, team ? 9900 + 400 * seatCount : 1900);
      // Every tenth customer's card starts declining after signup: renewals and retries fail, dunning cancels.
      if (i % 10 === 9) {
        const id = created.subscription.id;
        gateway.injectFailure({ outcome: 'declined', keyPrefix: `renewal:${id}:`, times: options.months + 1 });
        gateway.injectFailure({ outcome: 'declined', keyPrefix: `dunning:${id}:`, times: 3 * (options.months + 1) });
      }
      // Every tenth from the fifth: the first renewal is declined once and the first dunning retry collects it.
      if (i % 10 === 4)
        gateway.injectFailure({ outcome: 'declined', keyPrefix: `renewal:${created.subscription.id}:`, times: 1 });
      if (i % 50 === 49) clock.advance({ hours: 1 });
    }
  };
  const activeIds = async (): Promise<number[]> => {
    const ids: number[] = [];
    for (let page = 1; ; page++) {
      const rows = await site.subscriptions.list({ state: 'active', perPage: 200, page });
      for (const row of rows) ids.push(row.subscription.id);
      if (rows.length < 200) return ids;
    }
  };
  const started = process.hrtime.bigint();
  const monthly: SimulationMonth[] = [];
  let renewals = 0;
  let declines = 0;
  for (let month = 0; month < options.months; month++) {
    const label = clock.now().toISOString().slice(0, 7);
    await signUp(month === 0 ? options.subscriptions : (options.growth ?? 0));
    // To the same hour on the first of the next calendar month, so each row is one calendar month.
    const now = clock.now();
    clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 9));
    const done = await engine.runDue({ batchSize: 200 });
    renewals += done.renewed;
    declines += done.declined;
    const active = await activeIds();
    monthly.push({
      month: label,
      mrrInCents: active.reduce((sum, id) => sum + (listPrice.get(id) ?? 0), 0),
      active: active.length,
      signups: tally.signups,
      churned: tally.churned,
      renewals: done.renewed,
      declined: done.declined,
      recovered: done.recovered,
      revenueInCents: tally.revenueInCents,
    });
    tally.signups = 0;
    tally.churned = 0;
    tally.revenueInCents = 0;
  }
  stopListening();
  let revenueInCents = 0;
  for (let page = 1; ; page++) {
    const payments = await site.ledger.transactions({ types: ['payment'], perPage: 200, page });
    revenueInCents += payments.reduce((sum, p) => sum + p.amountInCents, 0);
    if (payments.length < 200) break;
  }
  const count = async (state: string | string[]) => {
    let n = 0;
    for (let page = 1; ; page++) {
      const rows = await site.subscriptions.list({ state, perPage: 200, page });
      n += rows.length;
      if (rows.length < 200) return n;
    }
  };
  const churned = await count(['cancelled', 'expired']);
  const active = await count('active');
  return {
    monthly,
    subscriptions: options.subscriptions,
    months: options.months,
    renewals,
    declines,
    revenueInCents,
    churned,
    active,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
}

/** A payment event's amount in cents (0 when the payload does not carry one). */
function amountOf(event: BillingEvent): number {
  const amount = (event.payload.transaction as { amount_in_cents?: unknown } | undefined)?.amount_in_cents;
  return typeof amount === 'number' && Number.isSafeInteger(amount) ? amount : 0;
}

const money = (cents: number) => (cents / 100).toFixed(2);

const TABLE_COLUMNS: readonly { readonly title: string; readonly cell: (m: SimulationMonth) => string }[] = [
  { title: 'Month', cell: (m) => m.month },
  { title: 'MRR', cell: (m) => money(m.mrrInCents) },
  { title: 'Active', cell: (m) => String(m.active) },
  { title: 'New', cell: (m) => String(m.signups) },
  { title: 'Churned', cell: (m) => String(m.churned) },
  { title: 'Renewed', cell: (m) => String(m.renewals) },
  { title: 'Declined', cell: (m) => String(m.declined) },
  { title: 'Recovered', cell: (m) => String(m.recovered) },
  { title: 'Revenue', cell: (m) => money(m.revenueInCents) },
];

/** The month-by-month report as a plain-text table (numbers right-aligned), one line per month. */
export function formatSimulationTable(summary: SimulationSummary): string {
  const rows = [TABLE_COLUMNS.map((c) => c.title), ...summary.monthly.map((m) => TABLE_COLUMNS.map((c) => c.cell(m)))];
  const widths = TABLE_COLUMNS.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0] ?? []), rule, ...rows.slice(1).map(line)].join('\n');
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/**
 * The report as a self-contained HTML page: a chart (revenue bars and an MRR line, hand-drawn
 * SVG, so the file opens anywhere with no script or network) above the same table.
 */
export function renderSimulationHtml(summary: SimulationSummary): string {
  const months = summary.monthly;
  const width = 720;
  const height = 280;
  const pad = { left: 64, right: 16, top: 16, bottom: 40 };
  const plotWidth = width - pad.left - pad.right;
  const plotHeight = height - pad.top - pad.bottom;
  const top = Math.max(1, ...months.map((m) => Math.max(m.mrrInCents, m.revenueInCents)));
  const slot = plotWidth / Math.max(1, months.length);
  const y = (cents: number) => pad.top + plotHeight - (cents / top) * plotHeight;
  const bars = months
    .map((m, i) => {
      const x = pad.left + i * slot + slot * 0.2;
      const barTop = y(m.revenueInCents);
      return `<rect class="revenue" x="${x.toFixed(1)}" y="${barTop.toFixed(1)}" width="${(slot * 0.6).toFixed(1)}" height="${(pad.top + plotHeight - barTop).toFixed(1)}"><title>${escapeHtml(m.month)} revenue ${money(m.revenueInCents)}</title></rect>`;
    })
    .join('');
  const points = months.map((m, i) => `${(pad.left + i * slot + slot / 2).toFixed(1)},${y(m.mrrInCents).toFixed(1)}`);
  const labels = months
    .map(
      (m, i) =>
        `<text x="${(pad.left + i * slot + slot / 2).toFixed(1)}" y="${height - pad.bottom + 18}" text-anchor="middle">${escapeHtml(m.month)}</text>`,
    )
    .join('');
  const ticks = [0, 0.5, 1]
    .map(
      (f) =>
        `<text x="${pad.left - 8}" y="${(y(top * f) + 4).toFixed(1)}" text-anchor="end">${money(Math.round(top * f))}</text>`,
    )
    .join('');
  const head = TABLE_COLUMNS.map((c) => `<th>${escapeHtml(c.title)}</th>`).join('');
  const body = months
    .map((m) => `<tr>${TABLE_COLUMNS.map((c) => `<td>${escapeHtml(c.cell(m))}</td>`).join('')}</tr>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Simulation: ${summary.subscriptions} subscriptions over ${summary.months} months</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}
svg text{font-size:11px;fill:#444}
.revenue{fill:#8fb8de}
.mrr{fill:none;stroke:#c0392b;stroke-width:2}
table{border-collapse:collapse;margin-top:1rem}
th,td{padding:.25rem .6rem;border-bottom:1px solid #ddd;text-align:right}
th:first-child,td:first-child{text-align:left}
</style></head><body>
<h1>Simulation: ${summary.subscriptions} subscriptions over ${summary.months} months</h1>
<p>Bars: revenue taken each month. Line: MRR at the month's end (list price of active subscriptions).</p>
<svg role="img" aria-label="Revenue and MRR by month" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
<line x1="${pad.left}" y1="${pad.top + plotHeight}" x2="${width - pad.right}" y2="${pad.top + plotHeight}" stroke="#999"/>
${ticks}${bars}<polyline class="mrr" points="${points.join(' ')}"/>${labels}
</svg>
<table><thead><tr>${head}</tr></thead><tbody>
${body}
</tbody></table>
</body></html>
`;
}
