import { buildSecureFields, verifyDirectRedirect } from 'billing-engine/chargify';
import { Hono } from 'hono';
import { html, htmlPage, messageList, trustedHtml } from './hosted/html.js';

/** Options of {@link createMerchantDemoApp}: the merchant's direct credentials and where things are. */
export interface MerchantDemoOptions {
  /** The direct API user's public id (`secure[api_id]`). */
  readonly apiId: string;
  /** The direct API user's signing secret. It stays in this server: only signatures reach the browser. */
  readonly apiSecret: string;
  /** Base URL of the direct interface (`http://127.0.0.1:3000`); the form posts to `{directUrl}/api/v2/signups`. */
  readonly directUrl: string;
  /** Absolute URL of this app's `/demo/return`, signed into `secure[data]` as `redirect_uri`. */
  readonly returnUrl: string;
  /**
   * The product to sign up for, signed into `secure[data]` so the browser cannot change it. Without
   * it the form asks for a product handle (then it is an ordinary, changeable field).
   */
  readonly productHandle?: string;
  /**
   * The direct `api_password`: when given, the return page reads the call record
   * (`GET {directUrl}/api/v2/calls/{call_id}`, HTTP Basic) to show why a signup failed.
   */
  readonly apiPassword?: string;
  /** The instant the secure fields are signed at; default the system time. */
  readonly now?: () => Date;
}

// The direct-post result codes, in words a shopper can read.
const RESULT_MEANINGS: Readonly<Record<string, string>> = {
  '2000': 'Success',
  '4000': 'One or more validation errors',
  '4001': 'Authentication failed',
  '4011': 'Authentication failed: nonce missing',
  '4040': 'Not found',
  '4220': 'One or more validation errors',
  '4221': 'Duplicate submission',
  '4300': 'Card declined',
  '5000': 'An error occurred',
  '5001': 'The requested resource does not exist',
};

/**
 * A demo merchant's own pages for the direct-post interface (`{direct_url}`):
 * `GET /demo/signup` is the merchant's signup form, whose hidden `secure[...]` fields are signed
 * here with `buildSecureFields` (the secret never leaves the server) and which posts straight to
 * the direct endpoint `POST /api/v2/signups`, so card data never touches the merchant.
 * `GET /demo/return` is where the service redirects the browser afterwards: it verifies the
 * redirect's signature with `verifyDirectRedirect` against the merchant's own `api_id` and shows
 * the verified outcome and call id, or refuses a redirect that does not verify (400).
 * A plain Hono app: serve it on its own (`serve({ fetch: app.fetch })`) or mount it with `app.route('/', ...)`.
 */
export function createMerchantDemoApp(options: MerchantDemoOptions): Hono {
  const directUrl = options.directUrl.replace(/\/+$/, '');
  const signupUrl = `${directUrl}/api/v2/signups`;
  // The form posts to the direct host, which redirects back here: CSP form-action covers both hops.
  const formAction = `'self' ${new URL(directUrl).origin} ${new URL(options.returnUrl).origin}`;
  const now = options.now ?? (() => new Date());
  const app = new Hono();

  app.get('/demo/signup', () => {
    const secure = buildSecureFields({
      apiId: options.apiId,
      apiSecret: options.apiSecret,
      redirectUri: options.returnUrl,
      ...(options.productHandle === undefined
        ? {}
        : { data: { signup: { product: { handle: options.productHandle } } } }),
      now: now(),
    });
    const product =
      options.productHandle === undefined
        ? html`<label for="product">Plan (product handle)</label>
<input id="product" name="signup[product][handle]" required>`
        : html`<p>Plan: <strong>${options.productHandle}</strong></p>`;
    const body = html`<h1>Subscribe</h1>
<p class="muted">Demo merchant page. The card goes straight to the billing service, never to the merchant.</p>
<section aria-labelledby="signup-heading">
<h2 id="signup-heading">Your details</h2>
<form method="post" action="${signupUrl}">
${trustedHtml(secure.html)}
${product}
<fieldset><legend>About you</legend>
<div class="row">
<div><label for="first-name">First name</label>
<input id="first-name" name="signup[customer][first_name]" autocomplete="given-name" required></div>
<div><label for="last-name">Last name</label>
<input id="last-name" name="signup[customer][last_name]" autocomplete="family-name" required></div>
</div>
<label for="email">Email</label>
<input id="email" name="signup[customer][email]" type="email" autocomplete="email" required>
</fieldset>
<fieldset><legend>Card</legend>
<label for="card-number">Card number</label>
<input id="card-number" name="signup[payment_profile][card_number]" inputmode="numeric" autocomplete="cc-number" required>
<div class="row">
<div><label for="exp-month">Expiration month (MM)</label>
<input id="exp-month" name="signup[payment_profile][expiration_month]" inputmode="numeric" autocomplete="cc-exp-month" maxlength="2" required></div>
<div><label for="exp-year">Expiration year (YYYY)</label>
<input id="exp-year" name="signup[payment_profile][expiration_year]" inputmode="numeric" autocomplete="cc-exp-year" maxlength="4" required></div>
<div><label for="cvv">Security code (CVV)</label>
<input id="cvv" name="signup[payment_profile][cvv]" inputmode="numeric" autocomplete="cc-csc" maxlength="4"></div>
</div>
</fieldset>
<button type="submit">Subscribe</button>
</form>
</section>`;
    return htmlPage({ title: 'Subscribe - demo merchant', body, formAction });
  });

  app.get('/demo/return', async (c) => {
    const query = new URL(c.req.url).searchParams;
    const result = verifyDirectRedirect(query, { apiId: options.apiId, apiSecret: options.apiSecret });
    if (!result.ok) {
      // Nothing in an unverified redirect can be trusted, not even which call it names.
      const body = html`<h1>Response not verified</h1>
${messageList('error', 'The signature of this response did not verify.', ['Nothing was recorded from it.'])}
<p><a href="/demo/signup">Back to the signup form</a></p>`;
      return htmlPage({ status: 400, title: 'Response not verified - demo merchant', body });
    }
    const errors = result.success ? [] : await callErrors(options, directUrl, result.callId);
    const meaning = RESULT_MEANINGS[result.resultCode] ?? 'Unknown result';
    const body = html`<h1>${result.success ? 'Thank you for subscribing' : 'Signup failed'}</h1>
${
  result.success
    ? messageList('notice', 'Signup complete.', ['The billing service confirmed it with a verified signature.'])
    : messageList('error', `Signup failed: ${meaning}.`, errors)
}
<section aria-labelledby="result-heading">
<h2 id="result-heading">Verified result</h2>
<dl>
<dt>Signature</dt><dd data-testid="verified">verified</dd>
<dt>Outcome</dt><dd data-testid="outcome">${result.success ? 'success' : 'failure'}</dd>
<dt>Status code</dt><dd data-testid="status-code">${result.statusCode}</dd>
<dt>Result code</dt><dd data-testid="result-code">${result.resultCode} (${meaning})</dd>
<dt>Call id</dt><dd data-testid="call-id">${result.callId}</dd>
</dl>
</section>
${result.success ? '' : html`<p><a href="/demo/signup">Try again</a></p>`}`;
    return htmlPage({ title: 'Signup result - demo merchant', body });
  });

  return app;
}

/**
 * The error messages of a failed call, read server to server with the direct password; empty when
 * no password was configured or the record cannot be read (the page then shows the code alone).
 */
async function callErrors(options: MerchantDemoOptions, directUrl: string, callId: string): Promise<string[]> {
  if (options.apiPassword === undefined || !/^[0-9A-Za-z_-]{1,64}$/.test(callId)) return [];
  try {
    const credentials = Buffer.from(`${options.apiId}:${options.apiPassword}`, 'utf8').toString('base64');
    const reply = await fetch(`${directUrl}/api/v2/calls/${callId}`, {
      headers: { accept: 'application/json', authorization: `Basic ${credentials}` },
      signal: AbortSignal.timeout(5000),
    });
    if (!reply.ok) return [];
    const json = (await reply.json()) as { call?: { response?: { result?: { errors?: unknown } } } };
    const errors = json.call?.response?.result?.errors;
    if (!Array.isArray(errors)) return [];
    return errors
      .map((error: unknown) =>
        typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error,
      )
      .filter((message): message is string => typeof message === 'string');
  } catch {
    return [];
  }
}
