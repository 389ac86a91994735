// The error vocabulary of the service. A code is the wire identifier clients and operators see; it
// crosses process boundaries (writer replies carry the code, never a class name). Each error belongs to
// a category that says what a caller can do about it; which HTTP status a category is answered with is
// the HTTP layer's business (services/gateway/src/http/error-handler.ts), never a use case's.
export type ErrorCategory =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'notFound'
  | 'methodNotAllowed'
  | 'timedOut'
  /** What the request would create exists already. */
  | 'conflict'
  | 'tooLarge'
  | 'unsupported'
  | 'unprocessable'
  | 'rateLimited'
  | 'headersTooLarge'
  | 'internal'
  | 'notImplemented'
  /** The service cannot do it now; a retry later may pass and never duplicates. */
  | 'unavailable';

export const errorCodes = {
  tokenRequired: { code: 'E-G1/1-01', category: 'unauthenticated', message: 'Authentication token is required' },
  scopeMissing: { code: 'E-G1/1-02', category: 'forbidden', message: 'The token does not grant this operation' },
  deviceForbidden: { code: 'E-G1/1-03', category: 'forbidden', message: 'The token is bound to one device and may act only for it' },
  deviceKeyUnknown: { code: 'E-G1/1-04', category: 'unauthenticated', message: 'The device key is not registered' },
  deviceKeyMismatch: { code: 'E-G1/1-05', category: 'forbidden', message: 'The device key belongs to another device' },
  deviceExists: { code: 'E-C1/1-01', category: 'conflict', message: 'This device is already registered' },
  geofencesFull: { code: 'E-C1/1-02', category: 'conflict', message: 'The fleet holds as many geofences as it may' },
  webhooksFull: { code: 'E-C1/1-03', category: 'conflict', message: 'The fleet holds as many webhooks as it may' },
  deviceNotFound: { code: 'E-N1/1-05', category: 'notFound', message: 'No such device' },
  groupNotFound: { code: 'E-N1/1-06', category: 'notFound', message: 'No such vehicle group' },
  geofenceNotFound: { code: 'E-N1/1-07', category: 'notFound', message: 'No such geofence' },
  webhookNotFound: { code: 'E-N1/1-08', category: 'notFound', message: 'No such webhook' },
  tokenInvalid: { code: 'E-V1/1-03', category: 'invalid', message: 'An error occurred while executing the query' },
  validationFailed: { code: 'E-V1/1-01', category: 'invalid', message: 'The request body is invalid' },
  malformedBody: { code: 'E-V1/1-02', category: 'invalid', message: 'The request body could not be parsed' },
  parameterInvalid: { code: 'E-V1/1-06', category: 'invalid', message: 'A request parameter is invalid' },
  unsupportedMediaType: { code: 'E-V1/1-04', category: 'unsupported', message: 'Unsupported content type' },
  payloadTooLarge: { code: 'E-V1/1-05', category: 'tooLarge', message: 'The request body is too large' },
  bodyTooSlow: { code: 'E-V1/1-08', category: 'timedOut', message: 'The request body arrived too slowly' },
  transferCodingUnsupported: { code: 'E-V1/1-09', category: 'notImplemented', message: 'Unsupported transfer coding' },
  malformedHttp: { code: 'E-V1/1-10', category: 'invalid', message: 'The request is not valid HTTP' },
  headersTooLarge: { code: 'E-V1/1-11', category: 'headersTooLarge', message: 'The request headers are too large' },
  requestTimeout: { code: 'E-V1/1-12', category: 'timedOut', message: 'The request was not received in time' },
  idempotencyKeyReused: {
    code: 'E-V1/1-07',
    category: 'unprocessable',
    message: 'This Idempotency-Key was already used with a different request body',
  },
  apiKeyRequired: { code: 'E-A1/1-01', category: 'unauthenticated', message: 'A valid API key is required' },
  categoryNotFound: { code: 'E-N1/1-01', category: 'notFound', message: 'Product category not found' },
  methodNotAllowed: { code: 'E-N1/1-03', category: 'methodNotAllowed', message: 'Method not allowed on this route' },
  positionNotFound: { code: 'E-N1/1-04', category: 'notFound', message: 'The device has no recorded position' },
  routeNotFound: { code: 'E-N1/1-02', category: 'notFound', message: 'No such route' },
  brokerUnavailable: { code: 'E-S1/1-01', category: 'unavailable', message: 'The message broker is unavailable, retry later' },
  replyTimeout: { code: 'E-S1/1-02', category: 'unavailable', message: 'The write was not confirmed in time, retry later' },
  databaseUnavailable: { code: 'E-S1/1-03', category: 'unavailable', message: 'The database is unavailable, retry later' },
  shuttingDown: { code: 'E-S1/1-04', category: 'unavailable', message: 'The service is shutting down, retry later' },
  bodyBudgetExhausted: {
    code: 'E-S1/1-05',
    category: 'unavailable',
    message: 'Too many request bodies are being read at once, retry later',
  },
  tooManyStreams: { code: 'E-S1/1-07', category: 'unavailable', message: 'Too many live streams on this gateway, retry later' },
  busy: { code: 'E-S1/1-08', category: 'unavailable', message: 'The service is busy, retry later' },
  tooManyInFlight: { code: 'E-S1/1-06', category: 'unavailable', message: 'Too many writes are waiting for confirmation, retry later' },
  deviceRateLimited: { code: 'E-R1/1-01', category: 'rateLimited', message: 'This device has sent too many positions, retry later' },
  subjectRateLimited: { code: 'E-R1/1-02', category: 'rateLimited', message: 'Too many requests for this token subject, retry later' },
  subjectStreamsLimited: {
    code: 'E-R1/1-03',
    category: 'rateLimited',
    message: 'Too many live streams for this token subject, retry later',
  },
  internal: { code: 'E-S1/1-00', category: 'internal', message: 'Internal server error' },
} as const satisfies Record<string, { code: string; category: ErrorCategory; message: string }>;

export type ErrorKind = keyof typeof errorCodes;

/** What a refusal says besides its code and body; the HTTP edge turns each into a header, a TCP listener ignores them. */
export interface ErrorFields {
  /** The key a refused write is to be retried with, so that it is stored once. */
  idempotencyKey?: string;
  /** The scope the token lacks, which a client must ask its issuer for. */
  missingScope?: string;
  /** The rate limit that refused: its name, and the quota it allows per window. */
  rateLimit?: { policy: string; quota: number; windowSeconds: number };
}

export interface AppErrorOptions {
  kind: ErrorKind;
  message?: string;
  detail?: string;
  /** Extra fields for the JSON body, e.g. validation issues. */
  body?: Record<string, unknown>;
  /** Seconds a client should wait before retrying (503s and 429s). */
  retryAfterSeconds?: number;
  fields?: ErrorFields;
  cause?: unknown;
}

export class AppError extends Error {
  override name = 'AppError';
  readonly kind: ErrorKind;
  readonly code: string;
  readonly category: ErrorCategory;
  readonly detail: string | undefined;
  readonly body: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly fields: Readonly<ErrorFields>;

  constructor(options: AppErrorOptions) {
    const known = errorCodes[options.kind];
    super(options.message ?? known.message, { cause: options.cause });
    this.kind = options.kind;
    this.code = known.code;
    this.category = known.category;
    this.detail = options.detail;
    this.body = options.body;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.fields = options.fields ?? {};
  }

  /** Rebuilds an error received by code from another process (a writer's reply). */
  static fromCode(code: string, detail?: string): AppError {
    const kind = (Object.keys(errorCodes) as ErrorKind[]).find((name) => errorCodes[name].code === code) ?? 'internal';
    return new AppError({ kind, detail });
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.detail === undefined ? {} : { detail: this.detail }),
      ...this.body,
    };
  }
}
