// The error vocabulary of the service. A code is the wire identifier clients and operators see; it
// crosses process boundaries (writer replies carry the code, never a class name).
export const errorCodes = {
  tokenRequired: { code: 'E-G1/1-01', httpStatus: 401, message: 'Authentication token is required' },
  scopeMissing: { code: 'E-G1/1-02', httpStatus: 403, message: 'The token does not grant this operation' },
  deviceForbidden: { code: 'E-G1/1-03', httpStatus: 403, message: 'The token may only write positions of its own device' },
  tokenInvalid: { code: 'E-V1/1-03', httpStatus: 400, message: 'An error occurred while executing the query' },
  validationFailed: { code: 'E-V1/1-01', httpStatus: 400, message: 'The request body is invalid' },
  malformedBody: { code: 'E-V1/1-02', httpStatus: 400, message: 'The request body could not be parsed' },
  parameterInvalid: { code: 'E-V1/1-06', httpStatus: 400, message: 'A request parameter is invalid' },
  unsupportedMediaType: { code: 'E-V1/1-04', httpStatus: 415, message: 'Unsupported content type' },
  payloadTooLarge: { code: 'E-V1/1-05', httpStatus: 413, message: 'The request body is too large' },
  bodyTooSlow: { code: 'E-V1/1-08', httpStatus: 408, message: 'The request body arrived too slowly' },
  transferCodingUnsupported: { code: 'E-V1/1-09', httpStatus: 501, message: 'Unsupported transfer coding' },
  malformedHttp: { code: 'E-V1/1-10', httpStatus: 400, message: 'The request is not valid HTTP' },
  headersTooLarge: { code: 'E-V1/1-11', httpStatus: 431, message: 'The request headers are too large' },
  requestTimeout: { code: 'E-V1/1-12', httpStatus: 408, message: 'The request was not received in time' },
  idempotencyKeyReused: {
    code: 'E-V1/1-07',
    httpStatus: 422,
    message: 'This Idempotency-Key was already used with a different request body',
  },
  apiKeyRequired: { code: 'E-A1/1-01', httpStatus: 401, message: 'A valid API key is required' },
  categoryNotFound: { code: 'E-N1/1-01', httpStatus: 404, message: 'Product category not found' },
  methodNotAllowed: { code: 'E-N1/1-03', httpStatus: 405, message: 'Method not allowed on this route' },
  positionNotFound: { code: 'E-N1/1-04', httpStatus: 404, message: 'The device has no recorded position' },
  routeNotFound: { code: 'E-N1/1-02', httpStatus: 404, message: 'No such route' },
  brokerUnavailable: { code: 'E-S1/1-01', httpStatus: 503, message: 'The message broker is unavailable, retry later' },
  replyTimeout: { code: 'E-S1/1-02', httpStatus: 503, message: 'The write was not confirmed in time, retry later' },
  databaseUnavailable: { code: 'E-S1/1-03', httpStatus: 503, message: 'The database is unavailable, retry later' },
  shuttingDown: { code: 'E-S1/1-04', httpStatus: 503, message: 'The service is shutting down, retry later' },
  bodyBudgetExhausted: { code: 'E-S1/1-05', httpStatus: 503, message: 'Too many request bodies are being read at once, retry later' },
  tooManyInFlight: { code: 'E-S1/1-06', httpStatus: 503, message: 'Too many writes are waiting for confirmation, retry later' },
  deviceRateLimited: { code: 'E-R1/1-01', httpStatus: 429, message: 'This device has sent too many positions, retry later' },
  subjectRateLimited: { code: 'E-R1/1-02', httpStatus: 429, message: 'Too many requests for this token subject, retry later' },
  internal: { code: 'E-S1/1-00', httpStatus: 500, message: 'Internal server error' },
} as const;

export type ErrorKind = keyof typeof errorCodes;

export interface AppErrorOptions {
  kind: ErrorKind;
  message?: string;
  detail?: string;
  /** Extra fields for the JSON body, e.g. validation issues. */
  body?: Record<string, unknown>;
  /** Seconds a client should wait before retrying (503s and 429s). */
  retryAfterSeconds?: number;
  /** Response headers the answer carries besides Retry-After, e.g. the key to retry with. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  override name = 'AppError';
  readonly kind: ErrorKind;
  readonly code: string;
  readonly httpStatus: number;
  readonly detail: string | undefined;
  readonly body: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(options: AppErrorOptions) {
    const known = errorCodes[options.kind];
    super(options.message ?? known.message, { cause: options.cause });
    this.kind = options.kind;
    this.code = known.code;
    this.httpStatus = known.httpStatus;
    this.detail = options.detail;
    this.body = options.body;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
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
