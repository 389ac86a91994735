// How a webhook delivery is signed, as docs/events.md tells receivers to check it: the hex HMAC-SHA256,
// with the webhook's secret, of "<timestamp>.<body>", sent as `X-Fleet-Signature: sha256=<hex>` beside
// `X-Fleet-Timestamp` (Unix seconds). Signing the timestamp lets a receiver refuse an old delivery replayed.
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Fleet-Signature';
export const TIMESTAMP_HEADER = 'X-Fleet-Timestamp';
export const EVENT_ID_HEADER = 'X-Fleet-Event-Id';

export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
