import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSecureFields, escapeHtml, verifyDirectRedirect } from '../../src/direct-post-helpers.js';
import {
  directResponseSignature,
  type FormInput,
  parseSecureData,
  verifyDirectRequestSignature,
} from '../../src/domain/signing/index.js';

// Text that exercises escaping: HTML metacharacters, form delimiters, non-ASCII and astral characters.
const tricky = fc.string({
  unit: fc.constantFrom('a', 'Z', '0', ' ', '&', '<', '>', '"', "'", '=', '[', ']', '%', '+', 'é', '😀'),
});
const text = fc.oneof(fc.string(), tricky);
const key = fc.oneof(
  fc.stringMatching(/^[a-z_]{1,8}$/),
  tricky.filter((k) => k.length > 0),
);
const data: fc.Arbitrary<FormInput> = fc.dictionary(key, fc.oneof(text, fc.dictionary(key, text, { maxKeys: 3 })), {
  maxKeys: 4,
});
const credentials = fc.record({ apiId: fc.string({ minLength: 1 }), apiSecret: fc.string({ minLength: 1 }) });
const instant = fc.date({
  min: new Date('1970-01-01T00:00:00Z'),
  max: new Date('2100-01-01T00:00:00Z'),
  noInvalidDate: true,
});
const nonceBytes = fc.uint8Array({ minLength: 20, maxLength: 20 });
const redirectUri = fc.option(fc.webUrl({ withQueryParameters: true }), { nil: undefined });

const build = fc.record({ credentials, data, redirectUri, now: instant, bytes: nonceBytes }).map((input) => ({
  ...input,
  secure: buildSecureFields({
    ...input.credentials,
    data: input.data,
    redirectUri: input.redirectUri,
    now: input.now,
    random: () => input.bytes,
  }),
}));

function unescapeHtml(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|#39);/g, (_all, name: string) =>
    name === 'amp' ? '&' : name === 'lt' ? '<' : name === 'gt' ? '>' : name === 'quot' ? '"' : "'",
  );
}

/** The hidden inputs of the HTML, read back the way a browser reads attribute values. */
function inputsOf(html: string): [string, string][] {
  return html.split('\n').map((line) => {
    const match = /^<input type="hidden" name="([^"<>]*)" value="([^"<>]*)">$/.exec(line);
    if (!match) throw new Error(`not a hidden input: ${line}`);
    return [unescapeHtml(match[1]!), unescapeHtml(match[2]!)];
  });
}

/** A different hex digit at `index`, never the same digit in another case (which still verifies). */
function flipHex(signature: string, index: number): string {
  const at = index % signature.length;
  const digit = signature[at]!.toLowerCase();
  const replacement = digit === '0' ? '1' : '0';
  return signature.slice(0, at) + replacement + signature.slice(at + 1);
}

type RequestField = 'secure[api_id]' | 'secure[timestamp]' | 'secure[nonce]' | 'secure[data]' | 'secure[signature]';

describe('merchant helpers for direct-post forms (properties)', () => {
  it('builds fields whose request signature verifies with the secret, and parses back to the data', () => {
    fc.assert(
      fc.property(build, ({ credentials: creds, secure, now, bytes, redirectUri, data: input }) => {
        const fields = secure.fields;
        expect(fields['secure[timestamp]']).toBe(String(Math.floor(now.getTime() / 1000)));
        expect(fields['secure[nonce]']).toBe(Buffer.from(bytes).toString('hex'));
        expect(fields['secure[data]'] ?? '').toBe(secure.data);
        const ok = verifyDirectRequestSignature(
          {
            apiId: fields['secure[api_id]'],
            timestamp: fields['secure[timestamp]'],
            nonce: fields['secure[nonce]'],
            data: fields['secure[data]'],
          },
          creds.apiSecret,
          fields['secure[signature]'],
        );
        expect(ok).toBe(true);
        const parsed = parseSecureData(secure.data);
        // The redirect URI is written first into the data, so no merchant key can shadow it.
        if (redirectUri !== undefined) expect(parsed.redirect_uri).toBe(redirectUri);
        if (Object.keys(input).length === 0 && redirectUri === undefined)
          expect(fields['secure[data]']).toBeUndefined();
      }),
    );
  });

  it('fails verification when any one field is changed', () => {
    const fieldNames: RequestField[] = [
      'secure[api_id]',
      'secure[timestamp]',
      'secure[nonce]',
      'secure[data]',
      'secure[signature]',
    ];
    fc.assert(
      fc.property(
        build,
        fc.constantFrom(...fieldNames),
        fc.string({ minLength: 1 }),
        fc.nat(),
        ({ credentials: creds, secure }, field, extra, index) => {
          const fields: Record<RequestField, string> = {
            'secure[data]': '',
            ...secure.fields,
          };
          const tampered = { ...fields };
          tampered[field] = field === 'secure[signature]' ? flipHex(fields[field], index) : fields[field] + extra;
          expect(tampered[field]).not.toBe(fields[field]);
          const ok = verifyDirectRequestSignature(
            {
              apiId: tampered['secure[api_id]'],
              timestamp: tampered['secure[timestamp]'],
              nonce: tampered['secure[nonce]'],
              data: tampered['secure[data]'],
            },
            creds.apiSecret,
            tampered['secure[signature]'],
          );
          expect(ok).toBe(false);
        },
      ),
    );
  });

  it('fails verification under another secret', () => {
    fc.assert(
      fc.property(build, fc.string({ minLength: 1 }), ({ credentials: creds, secure }, other) => {
        fc.pre(other !== creds.apiSecret);
        const f = secure.fields;
        const parts = {
          apiId: f['secure[api_id]'],
          timestamp: f['secure[timestamp]'],
          nonce: f['secure[nonce]'],
          data: f['secure[data]'],
        };
        expect(verifyDirectRequestSignature(parts, other, f['secure[signature]'])).toBe(false);
      }),
    );
  });

  it('writes hidden inputs that a browser reads back to exactly the signed values', () => {
    fc.assert(
      fc.property(build, ({ secure }) => {
        expect(inputsOf(secure.html)).toEqual(Object.entries(secure.fields));
      }),
    );
  });

  it('escapes every HTML metacharacter and nothing else', () => {
    fc.assert(
      fc.property(text, (value) => {
        const escaped = escapeHtml(value);
        expect(escaped).not.toMatch(/[<>"']/);
        expect(escaped.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
        expect(unescapeHtml(escaped)).toBe(value);
      }),
    );
  });
});

const responseParams = fc.record({
  timestamp: fc.stringMatching(/^[0-9]{1,10}$/),
  nonce: fc.oneof(fc.constant(''), fc.string({ maxLength: 40 })),
  statusCode: fc.constantFrom('200', '401', '404', '409', '422', '500'),
  resultCode: fc.constantFrom('2000', '4001', '4011', '4040', '4220', '4221', '4300', '5000'),
  callId: fc.stringMatching(/^[0-9a-f]{40}$/),
});

type ResponseParams = typeof responseParams extends fc.Arbitrary<infer T> ? T : never;

type RedirectParam = 'api_id' | 'timestamp' | 'nonce' | 'status_code' | 'result_code' | 'call_id' | 'signature';

function redirectQuery(creds: { apiId: string; apiSecret: string }, p: ResponseParams): Record<RedirectParam, string> {
  return {
    api_id: creds.apiId,
    timestamp: p.timestamp,
    nonce: p.nonce,
    status_code: p.statusCode,
    result_code: p.resultCode,
    call_id: p.callId,
    signature: directResponseSignature({ apiId: creds.apiId, ...p }, creds.apiSecret),
  };
}

describe('verifying the redirect back from the service (properties)', () => {
  it('accepts the query string the service signs, as a string, URL or URLSearchParams', () => {
    fc.assert(
      fc.property(credentials, responseParams, (creds, p) => {
        const search = new URLSearchParams(redirectQuery(creds, p));
        for (const query of [`?${search}`, new URL(`https://merchant.example/back?${search}`), search]) {
          const result = verifyDirectRedirect(query, creds);
          expect(result).toEqual({
            ok: true,
            success: p.statusCode === '200',
            statusCode: p.statusCode,
            resultCode: p.resultCode,
            callId: p.callId,
            timestamp: p.timestamp,
            nonce: p.nonce,
          });
        }
      }),
    );
  });

  it('rejects the query when any one parameter is changed, dropped or repeated', () => {
    const names: RedirectParam[] = [
      'api_id',
      'timestamp',
      'nonce',
      'status_code',
      'result_code',
      'call_id',
      'signature',
    ];
    fc.assert(
      fc.property(
        credentials,
        responseParams,
        fc.constantFrom(...names),
        fc.constantFrom('change', 'drop', 'repeat'),
        fc.string({ minLength: 1 }),
        fc.nat(),
        (creds, p, name, how, extra, index) => {
          const query = redirectQuery(creds, p);
          const search = new URLSearchParams(query);
          if (how === 'drop') search.delete(name);
          else if (how === 'repeat') search.append(name, query[name]);
          else search.set(name, name === 'signature' ? flipHex(query.signature, index) : query[name] + extra);
          expect(verifyDirectRedirect(search, creds).ok).toBe(false);
        },
      ),
    );
  });

  it("rejects a response signed for another API user's id, even when the query names ours", () => {
    fc.assert(
      fc.property(credentials, fc.string({ minLength: 1 }), responseParams, (creds, otherId, p) => {
        fc.pre(otherId !== creds.apiId);
        const query = { ...redirectQuery({ apiId: otherId, apiSecret: creds.apiSecret }, p), api_id: creds.apiId };
        expect(verifyDirectRedirect(new URLSearchParams(query), creds).ok).toBe(false);
      }),
    );
  });
});
