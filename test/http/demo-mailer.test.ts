import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MailMessage } from 'billing-engine';
import { afterEach, describe, expect, it } from 'vitest';
import { createDemoMailer } from '../../examples/http/demo-mailer.js';
import { type TempDir, tempDir } from '../support/sqlite.js';

const MESSAGE: MailMessage = {
  id: 'mail:invoice:7:0b5c',
  site: 'acme',
  kind: 'invoice',
  from: 'billing@acme.localhost',
  to: ['ada@example.com'],
  cc: [],
  bcc: ['archive@acme.test'],
  subject: 'Invoice INV-7 from Acme',
  text: 'Please find attached invoice INV-7.',
  html: '<p>INV-7</p>',
  attachments: [
    { filename: 'INV-7.pdf', contentType: 'application/pdf', content: new Uint8Array([0x25, 0x50, 0x44, 0x46]) },
    { filename: '../escape.html', contentType: 'text/html; charset=utf-8', content: '<p>x</p>' },
  ],
};

describe('the example server mailer', () => {
  let dir: TempDir | undefined;
  afterEach(() => dir?.dispose());

  it('logs each message and writes it, with its attachments, under the directory', async () => {
    dir = tempDir('billing-mail-');
    const logged: [object, string][] = [];
    const mailer = createDemoMailer({
      logger: { info: (fields, message) => logged.push([fields, message]) },
      directory: dir.path,
    });
    await mailer.send(MESSAGE);
    expect(logged).toHaveLength(1);
    expect(logged[0]![1]).toBe('mail "Invoice INV-7 from Acme" to ada@example.com');
    expect(logged[0]![0]).toMatchObject({ mail: { kind: 'invoice', bcc: ['archive@acme.test'] } });
    const folder = join(dir.path, 'mail_invoice_7_0b5c');
    // Attachment names cannot climb out of the message's folder.
    expect(readdirSync(dir.path)).toEqual(['mail_invoice_7_0b5c']);
    expect(readdirSync(folder).sort()).toEqual(['__escape.html', 'INV-7.pdf', 'body.html', 'message.json'].sort());
    const headers = JSON.parse(readFileSync(join(folder, 'message.json'), 'utf8'));
    expect(headers).toMatchObject({
      subject: 'Invoice INV-7 from Acme',
      text: MESSAGE.text,
      attachments: ['INV-7.pdf', '../escape.html'],
    });
    expect(readFileSync(join(folder, 'INV-7.pdf')).toString('latin1')).toBe('%PDF');
    expect(readFileSync(join(folder, 'body.html'), 'utf8')).toBe('<p>INV-7</p>');
  });

  it('only logs without a directory', async () => {
    const logged: string[] = [];
    await createDemoMailer({ logger: { info: (_fields, message) => logged.push(message) } }).send(MESSAGE);
    expect(logged).toEqual(['mail "Invoice INV-7 from Acme" to ada@example.com']);
  });
});
