// What a webhook is on the wire: where events are POSTed, which types (all when absent), and the secret
// each delivery is signed with. The secret is never answered back.
import { z } from 'zod';
import { EVENT_TYPES } from '@fleet/shared/events/fleet-event';

export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_SECRET_MIN_LENGTH = 16;
export const WEBHOOK_SECRET_MAX_LENGTH = 256;

/** What is wrong with a webhook's URL, if anything. */
function urlProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain a NUL character';
  // A zone names an interface of this host (fe80::1%25eth0): a link-local address, which the URL parser refuses.
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*\[[^\]]*%/i.test(text)) return 'must not name an IPv6 zone: a link-local address is not reachable';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an http or https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.port === '0') return 'must not name port 0';
  return undefined;
}

/**
 * The URL as the event processor will deliver to it (the parser's form: tabs and line breaks dropped,
 * the host lower-cased, the default port left out), so that what is stored and answered is where
 * deliveries go.
 */
const webhookUrl = z
  .string()
  .max(WEBHOOK_URL_MAX_LENGTH)
  .superRefine((text, ctx) => {
    const problem = urlProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform((text) => new URL(text).href)
  .pipe(z.string().max(WEBHOOK_URL_MAX_LENGTH));

export const webhookRequestSchema = z.strictObject({
  url: webhookUrl,
  types: z
    .array(z.enum(EVENT_TYPES))
    .min(1)
    .max(EVENT_TYPES.length)
    .refine((types) => new Set(types).size === types.length, 'must not repeat a type')
    .optional(),
  // PostgreSQL stores no NUL in text: refused here rather than failing the insert.
  secret: z
    .string()
    .min(WEBHOOK_SECRET_MIN_LENGTH)
    .max(WEBHOOK_SECRET_MAX_LENGTH)
    .refine((secret) => !secret.includes('\u0000'), 'must not contain a NUL character'),
});

export interface Webhook {
  id: number;
  url: string;
  /** null: every type. */
  types: string[] | null;
}
