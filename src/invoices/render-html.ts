import { escapeHtml } from '../direct-post-helpers.js';
import { toMajorString } from '../domain/money/conversion.js';
import { localDateString } from '../domain/time/index.js';
import type { AddressFields } from '../ports/billing-records.js';
import type { DocumentRenderExtras, InvoiceCustomerSnapshot, InvoiceRecord, InvoiceSeller } from './model.js';

/**
 * The invoice as a standalone HTML page: the same content as the PDF (seller, number, dates,
 * customer, lines, discounts, taxes, totals, payments, credits, memo, metafields), with an inline
 * stylesheet and no script, so it can be served as is or printed. Every value from the record or
 * the extras is escaped: names, memos and metafields are customer- or merchant-supplied text.
 */

/** Markup whose values were escaped when it was built. */
class Markup {
  constructor(readonly text: string) {}
}

type Value = Markup | string | number | null | undefined | false | readonly Value[];

function render(value: Value): string {
  if (value instanceof Markup) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** A template whose interpolated values are escaped unless they are {@link Markup} already. */
function html(strings: TemplateStringsArray, ...values: readonly Value[]): Markup {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Markup(out);
}

function money(amountInCents: number, currency: string): string {
  return `${currency} ${toMajorString(amountInCents, currency)}`;
}

function addressBlock(address: AddressFields): Markup {
  const cityLine = [address.city, address.state, address.zip].filter((part) => part !== null && part !== '').join(', ');
  const lines = [address.address, address.address2, cityLine, address.country].filter(
    (line): line is string => line !== null && line !== '',
  );
  return html`${lines.map((line) => html`<br>${line}`)}`;
}

function sellerBlock(seller: InvoiceSeller): Markup {
  return html`<div class="seller"><strong class="site-name">${seller.name}</strong>${addressBlock(seller.address)}${
    seller.phone ? html`<br>${seller.phone}` : ''
  }</div>`;
}

function customerBlock(customer: InvoiceCustomerSnapshot): Markup {
  const name = `${customer.firstName} ${customer.lastName}`.trim();
  return html`<div class="customer"><h2>Bill to</h2><p>${name}${
    customer.organization ? html`<br>${customer.organization}` : ''
  }<br>${customer.email}${addressBlock(customer.billingAddress)}</p></div>`;
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2430;margin:0;background:#fff;line-height:1.4}
.invoice{max-width:48rem;margin:2rem auto;padding:0 1rem}
header{display:flex;justify-content:space-between;gap:2rem;margin-bottom:1.5rem}
h1{font-size:1.6rem;margin:0 0 .5rem;text-align:right}
h2{font-size:.8rem;text-transform:uppercase;color:#5a6474;margin:1.25rem 0 .35rem}
.site-name{font-size:1.2rem}
dl{display:grid;grid-template-columns:max-content auto;gap:.15rem 1rem;margin:0}
dt{color:#5a6474}dd{margin:0;text-align:right;font-weight:600}
table{width:100%;border-collapse:collapse;margin-top:1rem}
th{font-size:.8rem;text-transform:uppercase;color:#5a6474;text-align:left;border-bottom:1px solid #d5d9e0;padding:.35rem}
td{padding:.35rem;vertical-align:top;border-bottom:1px solid #eef0f3}
.num{text-align:right;white-space:nowrap}
.detail{color:#5a6474;font-size:.85rem}
.totals{margin-left:auto;width:auto;min-width:18rem}
.totals td{border:0}
.strong td{font-weight:700}
`;

/**
 * The invoice as a complete HTML document (`<!doctype html>` ... `</html>`). Dates of periods,
 * payments and credits are calendar dates in `extras.timeZone`.
 */
export function renderInvoiceHtml(invoice: InvoiceRecord, extras: DocumentRenderExtras): string {
  const currency = invoice.currency;
  const m = (cents: number) => money(cents, currency);
  const day = (instant: Date) => localDateString(instant, extras.timeZone);
  const facts: [string, string][] = [
    ['Invoice number', invoice.number ?? 'Draft'],
    ['Status', invoice.status],
    ['Issue date', invoice.issueDate],
    ['Due date', invoice.dueDate],
    ...(invoice.paidDate === null ? [] : [['Paid on', invoice.paidDate] as [string, string]]),
  ];

  const rows = invoice.lineItems.map((item) => {
    const period = item.periodStart && item.periodEnd ? `${day(item.periodStart)} to ${day(item.periodEnd)}` : '';
    return html`<tr><td>${item.title}${
      item.description !== '' && item.description !== item.title
        ? html`<div class="detail">${item.description}</div>`
        : ''
    }${period === '' ? '' : html`<div class="detail">${period}</div>`}${
      item.discountInCents !== 0 ? html`<div class="detail">Discount: -${m(item.discountInCents)}</div>` : ''
    }</td><td class="num">${item.quantity}</td><td class="num">${m(item.unitPriceInCents)}</td><td class="num">${m(
      item.subtotalInCents,
    )}</td></tr>`;
  });

  const totalRow = (label: string, amount: string, strong = false) =>
    html`<tr${strong ? html` class="strong"` : ''}><td>${label}</td><td class="num">${amount}</td></tr>`;
  const totals = [
    totalRow('Subtotal', m(invoice.subtotalInCents)),
    invoice.discounts.map((discount) =>
      totalRow(
        discount.couponCode === null ? discount.title : `${discount.title} (${discount.couponCode})`,
        `-${m(discount.amountInCents)}`,
      ),
    ),
    invoice.discounts.length === 0 && invoice.discountInCents !== 0
      ? totalRow('Discount', `-${m(invoice.discountInCents)}`)
      : '',
    invoice.taxes.length === 0
      ? totalRow('Tax', m(invoice.taxInCents))
      : invoice.taxes.map((tax) =>
          totalRow(tax.percentage === null ? tax.title : `${tax.title} (${tax.percentage}%)`, m(tax.amountInCents)),
        ),
    totalRow('Total', m(invoice.totalInCents), true),
    invoice.creditInCents !== 0 ? totalRow('Credits applied', `-${m(invoice.creditInCents)}`) : '',
    totalRow('Paid', `-${m(invoice.paidInCents)}`),
    invoice.refundInCents !== 0 ? totalRow('Refunded', m(invoice.refundInCents)) : '',
    totalRow('Amount due', m(invoice.dueInCents), true),
  ];

  const list = (heading: string, items: readonly Markup[]) =>
    items.length === 0 ? '' : html`<section><h2>${heading}</h2><ul>${items}</ul></section>`;
  const payments = invoice.payments.map(
    (payment) =>
      html`<li>${day(payment.appliedAt)}: ${m(payment.amountInCents)}${payment.memo ? ` (${payment.memo})` : ''}</li>`,
  );
  const credits = invoice.credits.map(
    (credit) =>
      html`<li>${day(credit.appliedAt)}: ${m(credit.amountInCents)}${credit.memo ? ` (${credit.memo})` : ''}</li>`,
  );
  const metafields = extras.metafields.map((field) => html`<dt>${field.name}</dt><dd>${field.value}</dd>`);

  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Invoice ${invoice.number ?? 'draft'} - ${invoice.seller.name}</title>
<style>${new Markup(STYLE)}</style>
</head>
<body>
<article class="invoice">
<header>${sellerBlock(invoice.seller)}<div><h1>Invoice</h1><dl>${facts.map(
    ([label, value]) => html`<dt>${label}</dt><dd data-field="${label.toLowerCase().replace(/ /g, '-')}">${value}</dd>`,
  )}</dl></div></header>
${customerBlock(invoice.customer)}
<table class="lines"><thead><tr><th>Description</th><th class="num">Qty</th><th class="num">Unit price</th><th class="num">Amount</th></tr></thead>
<tbody>${rows}</tbody></table>
<table class="totals"><tbody>${totals}</tbody></table>
${list('Payments', payments)}
${list('Credits', credits)}
${invoice.memo === '' ? '' : html`<section><h2>Memo</h2><p>${invoice.memo}</p></section>`}
${metafields.length === 0 ? '' : html`<section><h2>Details</h2><dl class="metafields">${metafields}</dl></section>`}
</article>
</body>
</html>
`;
  return page.text;
}
