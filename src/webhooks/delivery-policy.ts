/**
 * What happens after a webhook attempt (API.md section 5), as plain functions: only 2xx
 * succeeds; failures are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and
 * 24 h, then the delivery fails; `Retry-After` on 429/503 lengthens the scheduled delay to
 * what it asks (capped at 1 h), never shortens it (a receiver answering "0" would otherwise spend
 * the ten attempts in moments); 410 disables the endpoint. `scale` shrinks every delay (tests only).
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_SCHEDULE_MS = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
] as const;

/** The step past the schedule's last retry: an attempt made at it is a single one (a failure ends the delivery). */
export const SINGLE_ATTEMPT_STEP = RETRY_SCHEDULE_MS.length;

export const RETRY_AFTER_CAP_MS = HOUR;

/** An endpoint whose deliveries have all failed for this long is disabled and its seller e-mailed. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR;

/** At most this much of a receiver's answer is kept (first 1 KiB). */
export const RESPONSE_BODY_LIMIT_BYTES = 1024;

export type AttemptResult =
  { kind: 'response'; status: number; retryAfter?: string | null } | { kind: 'error'; message: string };

export type AttemptOutcome =
  | { status: 'succeeded' }
  | { status: 'pending'; delayMs: number; scheduleStep: number }
  | { status: 'failed'; disableEndpoint: boolean };

/**
 * The delivery's next state after an attempt. `scheduleStep` counts the scheduled retries
 * already used in this round (a manual retry starts a round with none left).
 */
export function decideOutcome(
  result: AttemptResult,
  scheduleStep: number,
  options: { scale: number; now: number; resumeAt?: Date | null },
): AttemptOutcome {
  if (result.kind === 'response' && result.status >= 200 && result.status < 300) return { status: 'succeeded' };
  if (result.kind === 'response' && result.status === 410) return { status: 'failed', disableEndpoint: true };
  // A manual attempt (one more, now) that failed: the delivery goes back to the automatic attempt
  // it put aside, at the same step of the schedule, later if the answer asked (Retry-After).
  const manual = options.resumeAt ? Math.max(0, options.resumeAt.getTime() - options.now) : null;
  if (manual === null && scheduleStep >= SINGLE_ATTEMPT_STEP) return { status: 'failed', disableEndpoint: false };
  let delayMs = manual ?? RETRY_SCHEDULE_MS[scheduleStep] * options.scale;
  if (result.kind === 'response' && (result.status === 429 || result.status === 503)) {
    const asked = retryAfterMs(result.retryAfter ?? null, options.now);
    if (asked !== null) delayMs = Math.max(delayMs, Math.min(asked, RETRY_AFTER_CAP_MS));
  }
  return {
    status: 'pending',
    delayMs: Math.round(delayMs),
    scheduleStep: manual === null ? scheduleStep + 1 : scheduleStep,
  };
}

/** A `Retry-After` header (delay in seconds or an HTTP date) in milliseconds from `now`; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * SECOND;
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** A short description of an attempt's failure, for `last_error`. */
export function describeFailure(result: AttemptResult): string | null {
  if (result.kind === 'error') return result.message;
  if (result.status >= 200 && result.status < 300) return null;
  if (result.status >= 300 && result.status < 400) return `HTTP ${result.status}: redirects are not followed`;
  return `HTTP ${result.status}`;
}
