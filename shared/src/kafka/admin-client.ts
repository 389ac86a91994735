// A long-lived kafkajs admin client that a stop closes for good. kafkajs's disconnect closes the
// connections its client knows of; a request still in flight goes on, and can put a connected broker back
// in the client or connect one again, which nothing would ever close (an embedding process then never
// exits by itself). This client refuses requests once closed, and closes once more after the requests in
// flight have ended. Every service's metadata, topic and lag requests go through one.
import type { Admin } from 'kafkajs';
import { KAFKA_REQUEST_TIMEOUT_MS } from './client';

export class AdminClient {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly admin: Admin) {}

  connect(): Promise<void> {
    return this.ask((admin) => admin.connect());
  }

  /** Runs one request on the client; refused once the client is closed. */
  async ask<T>(request: (admin: Admin) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the Kafka admin client is closed');
    const asked = request(this.admin);
    this.inFlight.add(asked);
    try {
      return await asked;
    } finally {
      this.inFlight.delete(asked);
    }
  }

  /**
   * Closes the client's connections, and those a request in flight keeps or opens again once it ends. A
   * request still retrying against a broker that is away is waited for no longer than one request
   * timeout; its connections are closed when it ends all the same.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.admin.disconnect();
    if (this.inFlight.size === 0) return;
    const closedAfter = Promise.allSettled([...this.inFlight])
      .then(() => this.admin.disconnect())
      .catch(() => undefined);
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([closedAfter, new Promise((resolve) => (waited = setTimeout(resolve, KAFKA_REQUEST_TIMEOUT_MS)))]);
    clearTimeout(waited);
  }
}
