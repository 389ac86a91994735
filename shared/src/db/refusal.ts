// Which PostgreSQL errors are about the data rather than the database. SQLSTATE class 22 (data
// exception: a date out of range, a NUL byte in text) and class 23 (integrity constraint violation)
// fail the same statement the same way however often it is retried; everything else (a lost
// connection, a shutdown, a timeout) may pass on the next attempt.
export function isDataRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}
