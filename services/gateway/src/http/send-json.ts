// Writes a JSON response straight to Node's response: express's res.json() also computes ETags, checks
// freshness and resolves the charset, none of which applies to an API answer, and on the write paths
// that is a measurable share of each request.
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** Sends a body that is already JSON text (a cached category, for one). */
export function sendJsonText(res: ServerResponse, status: number, text: Buffer | string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
