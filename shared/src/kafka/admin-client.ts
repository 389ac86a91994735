// A long-lived kafkajs admin client that a stop closes for good. kafkajs's disconnect closes the
// connections its client knows of; a request still in flight goes on, and can put a connected broker back
// in the client or connect one again, which nothing would ever close (an embedding process then never
// exits by itself). This client refuses its admin's calls once closed, and closes once more after the
// calls in flight have ended. Every service's metadata, topic and lag requests go through one.
import type { Admin } from 'kafkajs';
import { waitAtMost } from '../stop-deadline';
import { KAFKA_REQUEST_TIMEOUT_MS } from './client';

export class AdminClient {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  /**
   * The admin as a request sees it: each call is tracked on its own, since a request made of several
   * calls may settle before all of them have (Promise.all settles at the first failure, and the others go
   * on retrying), and each call made once the client is closed is refused.
   */
  private readonly tracked: Admin;

  constructor(private readonly admin: Admin) {
    this.tracked = new Proxy(admin, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (this.closed) return Promise.reject(new Error('the Kafka admin client is closed'));
          const result: unknown = value.apply(target, args);
          if (result instanceof Promise) {
            this.inFlight.add(result);
            const settled = () => this.inFlight.delete(result);
            result.then(settled, settled);
          }
          return result;
        };
      },
    });
  }

  connect(): Promise<void> {
    return this.ask((admin) => admin.connect());
  }

  /** Runs one request on the client; refused once the client is closed. */
  ask<T>(request: (admin: Admin) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the Kafka admin client is closed'));
    return request(this.tracked);
  }

  /**
   * Closes the client's connections, and those a call in flight keeps or opens again once it ends. A call
   * still retrying against a broker that is away is waited for no longer than one request timeout; its
   * connections are closed when it ends all the same.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.admin.disconnect();
    if (this.inFlight.size === 0) return;
    const closedAfter = Promise.allSettled([...this.inFlight]).then(() => this.admin.disconnect());
    await waitAtMost(closedAfter, KAFKA_REQUEST_TIMEOUT_MS);
  }
}
