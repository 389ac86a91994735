// What a webhook is on the wire: where events are POSTed, which types (all when absent), and the secret
// each delivery is signed with. The secret is never answered back.
import { z } from 'zod';
import { EVENT_TYPES } from '@fleet/shared/events/fleet-event';

export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_SECRET_MIN_LENGTH = 16;
export const WEBHOOK_SECRET_MAX_LENGTH = 256;

export const webhookRequestSchema = z.strictObject({
  url: z
    .string()
    .max(WEBHOOK_URL_MAX_LENGTH)
    .refine((text) => {
      try {
        const url = new URL(text);
        return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
      } catch {
        return false;
      }
    }, 'must be an http or https URL without credentials'),
  types: z
    .array(z.enum(EVENT_TYPES))
    .min(1)
    .max(EVENT_TYPES.length)
    .refine((types) => new Set(types).size === types.length, 'must not repeat a type')
    .optional(),
  secret: z.string().min(WEBHOOK_SECRET_MIN_LENGTH).max(WEBHOOK_SECRET_MAX_LENGTH),
});

export interface Webhook {
  id: number;
  url: string;
  /** null: every type. */
  types: string[] | null;
}
