// Turns a zod error on a request body into the 400 clients see: the code, a `detail` naming the
// first bad field, and every issue with its path.
import type { ZodError } from 'zod';
import { AppError } from '@fleet/shared';

export function validationError(error: ZodError): AppError {
  const issues = error.issues.map((issue) => ({
    path: issue.path.join('.'),
    code: issue.code,
    message: issue.message,
  }));
  const first = issues[0];
  return new AppError({
    kind: 'validationFailed',
    detail: first ? `${first.path || 'body'}: ${first.message}` : 'invalid body',
    body: { issues },
  });
}
