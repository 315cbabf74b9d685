import { escapeHtml } from 'billing-engine/chargify';

/**
 * Markup that is already safe to put in a page: built by {@link html} (which escaped every value it
 * was given) or declared trusted with {@link trustedHtml}. Keeping it a distinct type means a plain
 * string can never reach a page unescaped by accident.
 */
export class SafeHtml {
  readonly markup: string;

  constructor(markup: string) {
    this.markup = markup;
  }

  /** The markup, so that a SafeHtml can be written into a response body. */
  toString(): string {
    return this.markup;
  }
}

/** What {@link html} accepts between its literal parts: text is escaped, SafeHtml is kept, lists are joined. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  // `false`, null and undefined render as nothing so that `${cond && html`...`}` reads naturally.
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * A tagged template for page markup: every interpolated string or number goes through
 * `escapeHtml`, nested `html` fragments and arrays of them are inserted as they are. Use it for
 * every page fragment, so escaping is the default rather than something to remember.
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

/**
 * Declares markup trusted: only for markup made by code that escapes its own values (such as the
 * hidden fields of `buildSecureFields`), never for anything a user or the database supplied.
 */
export function trustedHtml(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** Options of {@link htmlPage}. */
export interface HtmlPageOptions {
  readonly title: string;
  readonly body: SafeHtml;
  /** Default 200. */
  readonly status?: number;
  /** Where forms of the page may post (CSP `form-action`); default `'self'`. */
  readonly formAction?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

// Plain CSS only: the pages must work, and look acceptable, with no script at all.
const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f5f6f8;color:#1d2430;line-height:1.45}
main{max-width:46rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin:0 0 1rem}
h2{font-size:1.25rem;margin:0 0 .5rem}
h3{font-size:1rem;margin:1rem 0 .5rem}
section,.panel{background:#fff;border:1px solid #d5d9e0;border-radius:8px;padding:1rem 1.25rem;margin:0 0 1rem}
form{margin:.25rem 0 .75rem}
fieldset{border:1px solid #d5d9e0;border-radius:6px;margin:0 0 .75rem;padding:.5rem .75rem}
legend{font-weight:600;padding:0 .25rem}
label{display:block;font-weight:600;margin:.5rem 0 .15rem}
.row{display:flex;gap:.75rem;flex-wrap:wrap}
.row>div{flex:1 1 8rem}
input,select,textarea{font:inherit;padding:.4rem .5rem;border:1px solid #8a94a6;border-radius:4px;width:100%;box-sizing:border-box}
input[type=radio]{width:auto;margin-right:.4rem}
.choice{display:flex;align-items:center;font-weight:400}
button{font:inherit;font-weight:600;padding:.5rem 1rem;border-radius:4px;border:1px solid #1f4fbf;background:#2557d6;color:#fff;cursor:pointer;margin-top:.5rem}
button.secondary{background:#fff;color:#1f4fbf}
button.danger{background:#b42318;border-color:#912018}
button:focus,input:focus,select:focus,textarea:focus{outline:3px solid #f0b429;outline-offset:1px}
.notice{border-left:4px solid #1a7f37;background:#eefbf1;padding:.75rem 1rem;margin:0 0 1rem}
.error{border-left:4px solid #b42318;background:#fef3f2;padding:.75rem 1rem;margin:0 0 1rem}
.error ul,.notice ul{margin:.25rem 0 0;padding-left:1.25rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 .5rem}
dt{font-weight:600}dd{margin:0}
.muted{color:#5a6474}
`;

/**
 * A complete HTML page response: `lang`, viewport, one `<main>`, the stylesheet, and headers that
 * suit pages opened from a capability URL (token or signed link in the path): no caching, no
 * `Referer` leaking the URL to another site, no framing (a framed portal could be clickjacked into
 * cancelling), and a CSP that allows no script at all.
 */
export function htmlPage(options: HtmlPageOptions): Response {
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title}</title>
<style>${trustedHtml(STYLE)}</style>
</head>
<body>
<main>
${options.body}
</main>
</body>
</html>
`;
  return new Response(document.markup, {
    status: options.status ?? 200,
    headers: {
      ...options.headers,
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action ${options.formAction ?? "'self'"}; frame-ancestors 'none'; base-uri 'none'`,
    },
  });
}

/** A page with only a heading and a message: 404, 403, 410 and similar answers. */
export function messagePage(status: number, title: string, message: string): Response {
  return htmlPage({
    status,
    title,
    body: html`<h1>${title}</h1>
<div class="panel"><p>${message}</p></div>`,
  });
}

/** Error messages (or notices) as an accessible list that screen readers announce. */
export function messageList(kind: 'error' | 'notice', heading: string, messages: readonly string[]): SafeHtml {
  if (messages.length === 0) return html``;
  const role = kind === 'error' ? 'alert' : 'status';
  return html`<div class="${kind}" role="${role}"><strong>${heading}</strong>
<ul>${messages.map((message) => html`<li>${message}</li>`)}</ul></div>`;
}
