// The test kit's HTTP client: what a test file sets up once (testClient) and then speaks to a gateway
// with, its authorization already set, naming routes by the route table's paths (routes.ts) rather than
// by literals. Each answer is what a client sees: the status, the body parsed when it is JSON, the headers.
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { signToken } from './harness';

export interface Answer {
  status: number;
  /** The JSON body, parsed; the text for any other body; undefined when empty. */
  body: any;
  headers: Headers;
}

export interface ApiClient {
  readonly url: string;
  /** The Authorization header it sends; undefined when none. */
  readonly authorization: string | undefined;
  /** A JSON body (a string or bytes are sent as they are, e.g. NDJSON or gzip). */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** A form body. */
  postForm(path: string, fields: Record<string, string> | string, headers?: Record<string, string>): Promise<Answer>;
  /** A JSON body, as post sends it. */
  patch(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>;
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
  delete(path: string, headers?: Record<string, string>): Promise<Answer>;
  /** Posts a trip location and resolves with the id it is stored under; rejects on any answer but 200. */
  postTrip(trip: Record<string, unknown>): Promise<number>;
  /** The same gateway with another Authorization header (undefined: none). */
  as(authorization: string | undefined): ApiClient;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, body: text === '' ? undefined : json ? JSON.parse(text) : text, headers: response.headers };
}

/** A client of the gateway at `url`, sending `authorization` with every request. */
export function apiClient(url: string, authorization?: string): ApiClient {
  const authHeaders = (): Record<string, string> => (authorization === undefined ? {} : { authorization });
  const send = (path: string, init: RequestInit & { headers: Record<string, string> }) =>
    fetch(`${url}${path}`, { ...init, headers: { ...authHeaders(), ...init.headers } }).then(answerOf);
  return {
    url,
    authorization,
    post: (path, body, headers = {}) =>
      send(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
      }),
    postForm: (path, fields, headers = {}) =>
      send(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: typeof fields === 'string' ? fields : new URLSearchParams(fields).toString(),
      }),
    patch: (path, body, headers = {}) =>
      send(path, { method: 'PATCH', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
    get: (path, headers = {}) => send(path, { method: 'GET', headers }),
    delete: (path, headers = {}) => send(path, { method: 'DELETE', headers }),
    async postTrip(trip) {
      const answer = await send(TRIP_LOCATION_PATH, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(trip),
      });
      if (answer.status !== 200) throw new Error(`the trip was answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer.body.data.id as number;
    },
    as: (other) => apiClient(url, other),
  };
}

/**
 * The per-file setup: a client of the stack's gateway with a freshly signed token of the run's secret
 * (its claims as given, e.g. `{ scope: 'positions:read' }`).
 */
export async function testClient(stack: { url: string }, claims: Record<string, unknown> = {}): Promise<ApiClient> {
  return apiClient(stack.url, `Bearer ${await signToken(claims)}`);
}
