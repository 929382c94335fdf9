import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The service's configuration, read once from the environment and validated at start-up.
 * Every setting has a default that makes `npm start` work on a fresh machine, except
 * `JWT_SECRET` in production.
 */
/** A signing secret long enough to resist guessing: at least 32 characters other than spaces. */
export function isStrongSecret(secret: string): boolean {
  return secret.replace(/\s/g, '').length >= 32;
}

const booleanFlag = z
  .enum(['true', 'false', '1', '0'], { message: 'must be "true" or "false"' })
  .transform((v) => v === 'true' || v === '1');

/**
 * A whole number written in decimal digits only: blanks, signs, exponents (`1e3`), hexadecimal
 * (`0x10`) and fractions are refused, where Number() would read " " as 0 and "0x10" as 16.
 */
const decimalDigits = (message: string) =>
  z
    .string()
    .regex(/^\d{1,15}$/, { message })
    .transform(Number);

const positiveSeconds = decimalDigits('must be a whole number of seconds').pipe(
  z
    .number()
    .min(60, { message: 'must be at least 60 seconds' })
    .max(31_536_000, { message: 'must be at most 31536000 seconds (a year)' }),
);

const wholeNumberBetween = (min: number, max: number, message: string) =>
  decimalDigits(message).pipe(z.number().min(min, { message }).max(max, { message }));
const integerBetween = (min: number, max: number) =>
  wholeNumberBetween(min, max, `must be an integer between ${min} and ${max}`);
const secondsBetween = (min: number, max: number) =>
  wholeNumberBetween(min, max, `must be a whole number of seconds between ${min} and ${max}`);
const urlWithProtocol = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    {
      message: `must be a valid URL (host, and a port of 1 to 65535 if any) starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
    },
  );

/** A host name of letters, digits and hyphens in dot-separated labels (RFC 1123), not all digits. */
const HOST_NAME =
  /^(?=.{1,253}$)(?!\d+(\.\d+)*$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * One mailbox, alone or with a display name: `no-reply@example.com`, `Payments <no-reply@example.com>`,
 * `"Payments, Inc" <no-reply@example.com>` (a comma outside quotes would make it two addresses).
 */
const MAILBOX = /^(?:(?:"[^"]*"\s*|[^<>@,"]*)<[^\s<>@,]+@[^\s<>@,]+>|[^\s<>@,]+@[^\s<>@,]+)$/;

/** An address or a CIDR block ("10.0.0.0/8", "fd00::/8"). */
function isAddressOrBlock(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/**
 * Whose X-Forwarded-For is believed: "false" nobody's, "true" anybody's (the left-most address;
 * only behind a proxy that overwrites the header), or the proxies' addresses and blocks,
 * comma-separated: the client address is then the nearest one the proxies did not add.
 */
const trustProxy = z.union([
  booleanFlag,
  z
    .string()
    .transform((v) => v.split(',').map((entry) => entry.trim()))
    .refine((entries) => entries.every(isAddressOrBlock), {
      message: 'must be "true", "false" or a comma-separated list of proxy addresses or CIDR blocks',
    }),
]);

const envSchema = z
  .object({
    NODE_ENV: z
      .enum(['development', 'production', 'test'], { message: 'must be development, production or test' })
      .default('development'),
    HOST: z
      .string()
      .refine((v) => isIP(v) !== 0 || HOST_NAME.test(v), { message: 'must be an IP address or a host name' })
      .default('0.0.0.0'),
    PORT: integerBetween(0, 65535).default(3000),
    // Set but blank (an unset variable substituted into `DATABASE_URL=${DB_URL}`) is a mistake, never
    // a request for the embedded PostgreSQL: real traffic would go to a database that dies with the container.
    DATABASE_URL: z
      .string()
      .refine((v) => v.trim() !== '', {
        message: 'is empty: set it to a postgres:// URL, or unset it for the embedded PostgreSQL',
      })
      .pipe(urlWithProtocol(['postgres:', 'postgresql:']))
      .optional(),
    DATABASE_POOL_SIZE: integerBetween(2, 100).default(10),
    DATABASE_LISTEN_URL: urlWithProtocol(['postgres:', 'postgresql:']).optional(),
    DATABASE_PREPARED_STATEMENTS: booleanFlag.default(true),
    CREDENTIAL_CACHE_SECONDS: integerBetween(0, 300).default(10),
    DATA_DIR: z.string().min(1).default('./.data'),
    JWT_SECRET: z
      .string()
      .refine(isStrongSecret, { message: 'must be at least 32 characters other than spaces' })
      .optional(),
    ACCESS_TOKEN_TTL: positiveSeconds.default(86_400),
    REFRESH_TOKEN_TTL: positiveSeconds.default(345_600),
    SMTP_URL: urlWithProtocol(['smtp:', 'smtps:'])
      .refine((v) => !URL.canParse(v) || new URL(v).hostname !== '', {
        message: 'must name the SMTP server: smtp://host:port',
      })
      .optional(),
    MAIL_FROM: z
      .string()
      .regex(MAILBOX, { message: 'must be an e-mail address, alone or as "Name <address>"' })
      .default('Seller Payments <no-reply@payments.local>'),
    WEBHOOKS_ALLOW_PRIVATE_URLS: booleanFlag.default(false),
    WEBHOOKS_RETRY_SCALE: z
      .string()
      // Decimal, with an exponent allowed: a test scale such as 1e-7 is written so by String().
      .regex(/^(\d+\.?\d*|\.\d+)(e-?\d+)?$/i, { message: 'must be a number greater than 0 and at most 1' })
      .transform(Number)
      .pipe(
        z
          .number()
          .gt(0, { message: 'must be a number greater than 0 and at most 1' })
          .max(1, { message: 'must be a number greater than 0 and at most 1' }),
      )
      .default(1),
    WEBHOOKS_TIMEOUT_SECONDS: secondsBetween(1, 60).default(15),
    WEBHOOKS_CONCURRENCY: integerBetween(1, 1000).default(64),
    WEBHOOKS_ENDPOINT_CONCURRENCY: integerBetween(1, 100).default(8),
    WEBHOOKS_SELLER_CONCURRENCY: integerBetween(1, 1000).default(16),
    PAYMENTS_PROCESSOR: z.enum(['sandbox'], { message: 'must be "sandbox"' }).default('sandbox'),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        message: 'must be one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
    WORKERS_IN_API: booleanFlag.default(true),
    TRUST_PROXY: trustProxy.default(false),
    DATABASE_QUERY_TIMEOUT: secondsBetween(1, 600).default(10),
    DATABASE_WAIT_TIMEOUT: secondsBetween(0, 600).default(30),
    SHUTDOWN_TIMEOUT: secondsBetween(1, 300).default(15),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV === 'production' && !env.JWT_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['JWT_SECRET'],
        message: 'is required when NODE_ENV=production',
      });
    }
    if (env.REFRESH_TOKEN_TTL <= env.ACCESS_TOKEN_TTL) {
      ctx.addIssue({
        code: 'custom',
        path: ['REFRESH_TOKEN_TTL'],
        message: 'must be longer than ACCESS_TOKEN_TTL',
      });
    }
  });

export type Environment = z.infer<typeof envSchema>;

/** Configuration as the application uses it, after start-up resolved the database and secret. */
export interface AppConfig {
  env: Environment['NODE_ENV'];
  host: string;
  port: number;
  databaseUrl: string;
  databasePoolSize: number;
  /** Statements with parameters are prepared once per connection (off behind a proxy that cannot keep them). */
  databasePreparedStatements: boolean;
  /**
   * The connection that LISTENs for credential changes: DATABASE_URL unless set (set it to reach
   * PostgreSQL directly when DATABASE_URL goes through a transaction-pooling proxy, which cannot LISTEN).
   */
  databaseListenUrl: string;
  /** How long a process reuses a user's or API key's credential state (0: read it on every request). */
  credentialCacheSeconds: number;
  /** Seconds a database statement may run before it is cancelled (and its request answers 503). */
  databaseQueryTimeout: number;
  dataDir: string;
  jwtSecret: string;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  smtpUrl?: string;
  mailFrom: string;
  webhooksAllowPrivateUrls: boolean;
  /** Multiplies every webhook retry delay and the 5-day disabling window (tests make them short). */
  webhooksRetryScale: number;
  webhooksTimeoutSeconds: number;
  /** Webhook requests in flight at once in one worker process. */
  webhooksConcurrency: number;
  /** Webhook requests in flight at once to one endpoint, across all workers. */
  webhooksEndpointConcurrency: number;
  /** Webhook requests in flight at once to the endpoints of one seller, across all workers. */
  webhooksSellerConcurrency: number;
  paymentsProcessor: Environment['PAYMENTS_PROCESSOR'];
  logLevel: Environment['LOG_LEVEL'];
  workersInApi: boolean;
  /** Whose X-Forwarded-For gives the client address: nobody's, anybody's, or these proxies' (addresses and CIDR blocks). */
  trustProxy: boolean | string[];
  /** Seconds a stopping API waits for running requests. */
  shutdownTimeout: number;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Variables whose empty value is refused rather than taken for unset (see DATABASE_URL). */
const EMPTY_IS_A_MISTAKE = new Set(['DATABASE_URL']);

/** Reads and validates the environment. Empty strings count as unset, except where a mistake (DATABASE_URL). */
export function readEnvironment(source: NodeJS.ProcessEnv = process.env): Environment {
  const input: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = source[key];
    if (value !== undefined && (value !== '' || EMPTY_IS_A_MISTAKE.has(key))) input[key] = value;
  }
  const parsed = envSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'environment');
        const got =
          input[name] !== undefined && name !== 'JWT_SECRET' ? ` (got "${withoutCredentials(input[name])}")` : '';
        return `${name} ${issue.message}${got}`;
      }),
    );
  }
  return parsed.data;
}

/** A value as it may be printed: a URL's user and password are replaced. */
export function withoutCredentials(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1***@');
}

/** The address a client on this machine reaches the service at (`0.0.0.0` listens on every interface). */
export function localBaseUrl(host: string, port: number): string {
  const hostname = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${hostname}:${port}`;
}

export function toAppConfig(env: Environment, resolved: { databaseUrl: string; jwtSecret: string }): AppConfig {
  return {
    env: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    databaseUrl: resolved.databaseUrl,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    databasePreparedStatements: env.DATABASE_PREPARED_STATEMENTS,
    databaseListenUrl: env.DATABASE_LISTEN_URL ?? resolved.databaseUrl,
    credentialCacheSeconds: env.CREDENTIAL_CACHE_SECONDS,
    databaseQueryTimeout: env.DATABASE_QUERY_TIMEOUT,
    dataDir: env.DATA_DIR,
    jwtSecret: resolved.jwtSecret,
    accessTokenTtl: env.ACCESS_TOKEN_TTL,
    refreshTokenTtl: env.REFRESH_TOKEN_TTL,
    smtpUrl: env.SMTP_URL,
    mailFrom: env.MAIL_FROM,
    webhooksAllowPrivateUrls: env.WEBHOOKS_ALLOW_PRIVATE_URLS,
    webhooksRetryScale: env.WEBHOOKS_RETRY_SCALE,
    webhooksTimeoutSeconds: env.WEBHOOKS_TIMEOUT_SECONDS,
    webhooksConcurrency: env.WEBHOOKS_CONCURRENCY,
    webhooksEndpointConcurrency: env.WEBHOOKS_ENDPOINT_CONCURRENCY,
    webhooksSellerConcurrency: env.WEBHOOKS_SELLER_CONCURRENCY,
    paymentsProcessor: env.PAYMENTS_PROCESSOR,
    logLevel: env.LOG_LEVEL,
    workersInApi: env.WORKERS_IN_API,
    trustProxy: env.TRUST_PROXY,
    shutdownTimeout: env.SHUTDOWN_TIMEOUT,
  };
}
