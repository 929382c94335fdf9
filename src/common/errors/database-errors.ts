/**
 * Recognises failures that mean "the database cannot be reached right now", as opposed to
 * a failed statement. Those answer 503 and the process keeps running: the connection pool
 * reconnects by itself once the database is back.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);
// 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300 too_many_connections
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
// Refused while connecting, for what the connection says: 3D000 the database does not exist
// (dropped, renamed), 28P01 a wrong password (rotated), 28000 not allowed to connect (pg_hba, a
// role that may not log in). A running service answers 503; start-up does not wait for them.
const REFUSED_CODES = new Set(['3D000', '28P01', '28000']);
const MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection is not established',
  // a pg client used after it was ended (a connection closing while the service stops)
  'Client was closed and is not queryable',
  'the database system is',
  // 55000 while connecting to a database closed to connections (ALTER DATABASE … ALLOW_CONNECTIONS false)
  'is not currently accepting connections',
  // the client's deadline (pg query_timeout) passed: the database is silent
  'Query read timeout',
];

/** The database cannot be used now: out of reach (see isDatabaseUnreachable), or refusing this service's connections. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return isDatabaseUnreachable(error) || REFUSED_CODES.has(String(sqlStateOf(error)));
}

/** Out of reach, starting, stopping or full: what start-up waits for (see waitForDatabase). */
export function isDatabaseUnreachable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 3) return false;
  const { code, message, driverError, cause } = error as {
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
  };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08'))) {
    return true;
  }
  if (typeof message === 'string' && MESSAGES.some((m) => message.includes(m))) return true;
  return isDatabaseUnreachable(driverError, depth + 1) || isDatabaseUnreachable(cause, depth + 1);
}

/**
 * The database refused a statement for now, not for what it says: unreachable, or busy with
 * concurrent work (serialization failure, deadlock, lock timeout, statement timeout). The same
 * statement may succeed later.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (isDatabaseUnavailable(error) || isBusyWithConcurrentUpdates(error)) return true;
  return sqlStateOf(error) === '57014';
}

/** A statement lost to concurrent updates: serialization failure (40001), deadlock (40P01), lock timeout (55P03). */
export function isBusyWithConcurrentUpdates(error: unknown): boolean {
  const sqlState = sqlStateOf(error);
  return sqlState === '40001' || sqlState === '40P01' || sqlState === '55P03';
}

function sqlStateOf(error: unknown): unknown {
  const { code, driverError } = (error ?? {}) as { code?: unknown; driverError?: { code?: unknown } };
  return driverError?.code ?? code;
}

/** A unique constraint refused the row (PostgreSQL 23505); given `constraint`, only that one. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return isViolation(error, '23505', constraint);
}

/** A CHECK constraint refused the row (PostgreSQL 23514); given `constraint`, only that one. */
export function isCheckViolation(error: unknown, constraint?: string): boolean {
  return isViolation(error, '23514', constraint);
}

function isViolation(error: unknown, code: string, constraint: string | undefined): boolean {
  const driverError = (error as { driverError?: { code?: unknown; constraint?: unknown } } | null)?.driverError;
  return driverError?.code === code && (constraint === undefined || driverError.constraint === constraint);
}
