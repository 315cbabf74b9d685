import { createMemoryStorage } from 'billing-engine/adapters/memory';
import { describe, expect, it } from 'vitest';
import { formatSimulationTable, renderSimulationHtml, simulate } from '../../bin/simulate.js';

describe('simulate: the month-by-month report', () => {
  it('adds up, month by month, to the totals, and shows declines, recoveries, churn and growth', async () => {
    const storage = createMemoryStorage();
    const summary = await simulate(storage, { subscriptions: 20, months: 3, growth: 5 });
    await storage.close();
    const months = summary.monthly;
    expect(months.map((m) => m.month)).toEqual(['2026-01', '2026-02', '2026-03']);
    const sum = (pick: (m: (typeof months)[number]) => number) => months.reduce((total, m) => total + pick(m), 0);
    expect(sum((m) => m.renewals)).toBe(summary.renewals);
    expect(sum((m) => m.declined)).toBe(summary.declines);
    expect(sum((m) => m.revenueInCents)).toBe(summary.revenueInCents);
    expect(sum((m) => m.churned)).toBe(summary.churned);
    // The book at the start, then `growth` a month.
    expect(months.map((m) => m.signups)).toEqual([20, 5, 5]);
    // Every tenth from the fifth declines its first renewal once and the first dunning retry, a day
    // later, collects it: customers 4 and 14 (Basic: Feb 1 renewal, Feb 2 retry) and 24 (signed up
    // Feb 1 on the Team trial: trial-end charge Feb 15, retry Feb 16), all in the run to Mar 1.
    expect(months.map((m) => m.recovered)).toEqual([0, 3, 0]);
    // Customers 9 and 19 decline everything, and dunning cancels each after two retries a day apart:
    // 9 (Team) at the end of its trial in January, 19 (Basic) after its Feb 1 renewal.
    expect(months.map((m) => m.churned)).toEqual([1, 1, 0]);
    expect(months.at(-1)?.active).toBe(summary.active);
    // MRR counts active subscriptions at list price: a basic plan is 19.00, a team plan 99.00 plus seats.
    expect(months.every((m) => m.mrrInCents >= m.active * 1900)).toBe(true);
  }, 60_000);

  it('prints a right-aligned table and an HTML page with a chart of every month', async () => {
    const storage = createMemoryStorage();
    const summary = await simulate(storage, { subscriptions: 10, months: 2 });
    await storage.close();
    const table = formatSimulationTable(summary).split('\n');
    expect(table[0]).toMatch(/^Month\s+MRR\s+Active\s+New\s+Churned\s+Renewed\s+Declined\s+Recovered\s+Revenue$/);
    expect(table[1]).toMatch(/^-+( +-+){8}$/);
    expect(table).toHaveLength(2 + summary.monthly.length);
    const first = summary.monthly[0];
    expect(table[2]?.startsWith(first?.month ?? '?')).toBe(true);
    expect(table[2]?.trimEnd().endsWith(((first?.revenueInCents ?? 0) / 100).toFixed(2))).toBe(true);
    // Every row has the same width: the columns line up.
    expect(new Set(table.map((line) => line.length)).size).toBe(1);

    const html = renderSimulationHtml(summary);
    expect(html).toMatch(/^<!doctype html>/);
    const polyline = /<polyline class="mrr" points="([^"]*)"/.exec(html)?.[1] ?? '';
    expect(polyline.split(' ')).toHaveLength(summary.monthly.length);
    expect(html.match(/<rect class="revenue"/g)).toHaveLength(summary.monthly.length);
    expect(html.match(/<tr><td>/g)).toHaveLength(summary.monthly.length);
    expect(html).not.toMatch(/<script|https?:\/\//);
  }, 60_000);
});
