import { BillingError, invalid, notFound, validationError } from 'billing-engine';
import { describe, expect, it } from 'vitest';
import { ACCESS_DENIED_TEXT, errorListBody, serializeError } from '../../src/wire/index.js';

describe('serializeError', () => {
  it('list (the common shape): {"errors":[...]} with the status from the error table', () => {
    const error = validationError([{ message: 'Memo: cannot be blank.' }, { message: 'Amount: is not a number.' }]);
    expect(serializeError(error)).toEqual({
      status: 422,
      kind: 'json',
      json: { errors: ['Memo: cannot be blank.', 'Amount: is not a number.'] },
    });
    expect(serializeError(notFound('Subscription', 5))).toEqual({
      status: 404,
      kind: 'json',
      json: { errors: ['Subscription 5 not found.'] },
    });
    expect(serializeError(new BillingError('payment_declined', 'Bogus Gateway: Forced failure'))).toEqual({
      status: 422,
      kind: 'json',
      json: { errors: ['Bogus Gateway: Forced failure'] },
    });
  });

  it('string: {"errors":"..."}', () => {
    const error = new BillingError('not_found', 'Invalid referral code.', { shape: 'string' });
    expect(serializeError(error)).toEqual({ status: 404, kind: 'json', json: { errors: 'Invalid referral code.' } });
  });

  it('single: {"error":"..."}', () => {
    const error = new BillingError('invalid_transition', 'The subscription is already canceled', { shape: 'single' });
    expect(serializeError(error)).toEqual({
      status: 422,
      kind: 'json',
      json: { error: 'The subscription is already canceled' },
    });
  });

  it('map: messages grouped by attribute, unattributed ones under base', () => {
    const error = validationError(
      [
        { message: 'Amount: is not a number.', attribute: 'amount_in_cents' },
        { message: 'Amount: must be greater than or equal to 0.', attribute: 'amount_in_cents' },
        { message: 'Something else.' },
      ],
      'map',
    );
    expect(serializeError(error).kind === 'json' && serializeError(error)).toMatchObject({
      json: {
        errors: {
          amount_in_cents: ['Amount: is not a number.', 'Amount: must be greater than or equal to 0.'],
          base: ['Something else.'],
        },
      },
    });
  });

  it('objects: each detail with its extra fields and message', () => {
    const error = validationError(
      [
        {
          message: 'Quantity: must be either 1 (on) or 0 (off).',
          extra: { kind: 'allocation', component_id: 9, on: 'quantity' },
        },
      ],
      'objects',
    );
    expect(serializeError(error)).toEqual({
      status: 422,
      kind: 'json',
      json: {
        errors: [
          {
            kind: 'allocation',
            component_id: 9,
            on: 'quantity',
            message: 'Quantity: must be either 1 (on) or 0 (off).',
          },
        ],
      },
    });
  });

  it('401 is always the 27-byte plain text, whatever the shape', () => {
    expect(serializeError(new BillingError('unauthorized', 'HTTP Basic: Access denied.', { shape: 'plain' }))).toEqual({
      status: 401,
      kind: 'text',
      text: 'HTTP Basic: Access denied.\n',
    });
    expect(serializeError(new BillingError('unauthorized', 'nope'))).toEqual({
      status: 401,
      kind: 'text',
      text: ACCESS_DENIED_TEXT,
    });
    expect(Buffer.byteLength(ACCESS_DENIED_TEXT)).toBe(27);
  });

  it('5xx never shows the message', () => {
    expect(serializeError(new BillingError('storage', 'connection to 10.0.0.5 refused'))).toEqual({
      status: 500,
      kind: 'json',
      json: { errors: ['Internal error'] },
    });
  });

  it('errorListBody builds non-BillingError bodies', () => {
    expect(errorListBody(413, ['Body: too large.'])).toEqual({
      status: 413,
      kind: 'json',
      json: { errors: ['Body: too large.'] },
    });
    expect(serializeError(invalid('X: y.', 'x'))).toEqual({ status: 422, kind: 'json', json: { errors: ['X: y.'] } });
  });
});
