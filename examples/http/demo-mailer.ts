/**
 * The example server's mailer: nothing leaves the machine. Each message is logged (one line: who,
 * what, the subject) and, when a directory is given, written there as `{id}/message.json` (headers
 * and text body), `{id}/body.html` and each attachment by its file name, so a developer can open
 * what a customer would have received. A real deployment passes its own `Mailer` (SMTP, an email
 * API) as the engine's `mail.mailer`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Mailer, MailMessage } from 'billing-engine';
import type { OpsLogger } from './ops/ops-logger.js';

/** Options of {@link createDemoMailer}. */
export interface DemoMailerOptions {
  /** Where each message is logged. */
  readonly logger: Pick<OpsLogger, 'info'>;
  /** A directory to write each message into; none: log only. */
  readonly directory?: string;
}

/** A file or directory name from message text: letters, digits, `.`, `-` and `_` only. */
function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return cleaned === '' ? 'file' : cleaned.slice(0, 120);
}

/** A mailer that logs each message and, with a directory, writes it there. */
export function createDemoMailer(options: DemoMailerOptions): Mailer {
  return {
    async send(message: MailMessage): Promise<void> {
      if (options.directory !== undefined) {
        const folder = join(options.directory, safeName(message.id));
        await mkdir(folder, { recursive: true });
        const { attachments, html, ...headers } = message;
        await writeFile(
          join(folder, 'message.json'),
          `${JSON.stringify({ ...headers, attachments: attachments.map((a) => a.filename) }, null, 2)}\n`,
        );
        if (html !== undefined) await writeFile(join(folder, 'body.html'), html);
        for (const attachment of attachments)
          await writeFile(join(folder, safeName(attachment.filename)), attachment.content);
      }
      options.logger.info(
        {
          mail: {
            id: message.id,
            site: message.site,
            kind: message.kind,
            to: message.to,
            cc: message.cc,
            bcc: message.bcc,
            attachments: message.attachments.map((a) => a.filename),
          },
        },
        `mail "${message.subject}" to ${message.to.join(', ')}`,
      );
    },
  };
}
