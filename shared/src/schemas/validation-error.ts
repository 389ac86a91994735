// Turns a zod error on a request body into the 400 clients see: the code, a `detail` naming the
// first bad field, and the issues with their paths, at most MAX_ISSUES of them: a 1 MB body of bad
// vehicle ids would otherwise be answered with tens of megabytes.
import type { ZodError } from 'zod';
import { AppError } from '@fleet/shared/errors';
import { issueCode } from '@fleet/shared/schemas/issue-wording';

/** Enough to name every field of a trip or a group; the rest are elements of one bad array. */
export const MAX_ISSUES = 100;

export function validationError(error: ZodError): AppError {
  const issues = error.issues.slice(0, MAX_ISSUES).map((issue) => ({
    path: issue.path.join('.'),
    code: issueCode(issue),
    message: issue.message,
  }));
  const first = issues[0];
  return new AppError({
    kind: 'validationFailed',
    detail: first ? `${first.path || 'body'}: ${first.message}` : 'invalid body',
    body: { issues },
  });
}
