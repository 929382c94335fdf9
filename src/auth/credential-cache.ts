import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client, Notification } from 'pg';
import { Gauge } from 'prom-client';
import { APP_CONFIG, AppConfig } from '../config/config';
import { HttpMetrics } from '../metrics/http-metrics';

/** The channel the database triggers notify (migration CredentialNotifications1763800800000). */
export const CREDENTIALS_CHANNEL = 'credentials_changed';

/** How often the LISTEN connection is checked, and how old its last answer may be for the cache to be used. */
const HEARTBEAT_MS = 250;
const HEARTBEAT_FRESH_MS = 900;
const RECONNECT_MS = 500;
/** Entries kept per kind (and sessions per user); the oldest goes first. */
const MAX_ENTRIES = 10_000;
const MAX_SESSIONS_PER_USER = 100;

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/**
 * A per-process cache of what authentication reads on every request: a user's credential
 * state per session, and an API key's identity; and of what every charge reads first, a
 * seller's commercial terms (the seller with its rate and split plans). Entries live
 * `CREDENTIAL_CACHE_SECONDS` at most, and leave at once on a change:
 * - in this process, the service that made the change calls `userChanged`/`apiKeyChanged`/
 *   `sellerChanged` after its transaction commits;
 * - in every process, database triggers NOTIFY `credentials_changed` in the changing
 *   transaction (token version, active, superuser, access entries, session revocation, API
 *   key active/deleted; a seller's row, a rate plan), which a dedicated connection LISTENs to.
 * While that connection is down or has not answered its heartbeat for 0.9 s, the cache is
 * emptied and bypassed (every request reads the database) until it is back.
 *
 * A read that started before an invalidation is not stored (`generation`), so a request
 * racing a change cannot put the old state back.
 */
@Injectable()
export class CredentialCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('CredentialCache');
  private readonly ttlMs: number;
  private readonly users = new Map<string, Map<string, Entry<unknown>>>();
  private readonly apiKeys = new Map<string, Entry<unknown> & { keyId: string }>();
  private readonly sellerTerms = new Map<string, Entry<unknown>>();
  private generation = 0;
  /** The payloads of the last change notifications received (at most 100), and how many were received in all. */
  private readonly heard: string[] = [];
  private heardCount = 0;
  private client?: Client;
  private lastAnswer = 0;
  private heartbeatInFlight = false;
  private heartbeat?: NodeJS.Timeout;
  private reconnect?: NodeJS.Timeout;
  private stopped = true;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(HttpMetrics) metrics: HttpMetrics,
  ) {
    this.ttlMs = config.credentialCacheSeconds * 1000;
    const listening = () => this.listening;
    new Gauge({
      name: 'credential_cache_listening',
      help: 'Whether credential change notifications arrive, so the credential cache is used (1) or bypassed (0).',
      registers: [metrics.registry],
      collect() {
        this.set(listening() ? 1 : 0);
      },
    });
  }

  onApplicationBootstrap(): void {
    if (this.ttlMs === 0) return;
    this.stopped = false;
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS).unref();
    void this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.reconnect);
    const client = this.client;
    this.drop();
    await client?.end().catch(() => undefined);
  }

  /** Whether entries may be used: the LISTEN connection is up and answered recently. */
  get listening(): boolean {
    if (!this.client) return false;
    if (Date.now() - this.lastAnswer <= HEARTBEAT_FRESH_MS) return true;
    this.clear(); // a silent connection: what it may have missed cannot be trusted
    return false;
  }

  /** A user's credential state for a session (`sessionId` null: none), from the cache or `load`. */
  user<T extends object>(userId: string, sessionId: string | null, load: () => Promise<T | null>): Promise<T | null> {
    const sessions = this.users.get(userId);
    return this.through(
      () => sessions?.get(sessionId ?? '') as Entry<T> | undefined,
      (entry) => {
        let map = this.users.get(userId);
        if (!map) {
          if (this.users.size >= MAX_ENTRIES) this.users.delete(this.users.keys().next().value!);
          map = new Map();
          this.users.set(userId, map);
        }
        if (map.size >= MAX_SESSIONS_PER_USER) map.delete(map.keys().next().value!);
        map.set(sessionId ?? '', entry);
      },
      load,
    );
  }

  /**
   * An API key's identity by the hash of its secret, from the cache or `load`. Unknown keys are
   * not cached. (`load` also records the key's use, at most once a minute: with the cache, a
   * busy key's `last_used_at` is at most a minute and `CREDENTIAL_CACHE_SECONDS` old.)
   */
  apiKey<T extends { id: string }>(keyHash: string, load: () => Promise<T | null>): Promise<T | null> {
    return this.through(
      () => this.apiKeys.get(keyHash) as Entry<T> | undefined,
      (entry) => {
        this.apiKeys.delete(keyHash);
        if (this.apiKeys.size >= MAX_ENTRIES) this.apiKeys.delete(this.apiKeys.keys().next().value!);
        this.apiKeys.set(keyHash, { ...entry, keyId: entry.value.id });
      },
      load,
    );
  }

  /** A seller's commercial terms (the seller with its plans), from the cache or `load`. Unknown sellers are not cached. */
  sellerTermsOf<T>(sellerId: string, load: () => Promise<T | null>): Promise<T | null> {
    // By the id as the database spells it (lower case), which its notifications name.
    sellerId = sellerId.toLowerCase();
    return this.through(
      () => this.sellerTerms.get(sellerId) as Entry<T> | undefined,
      (entry) => {
        this.sellerTerms.delete(sellerId);
        if (this.sellerTerms.size >= MAX_ENTRIES) this.sellerTerms.delete(this.sellerTerms.keys().next().value!);
        this.sellerTerms.set(sellerId, entry);
      },
      load,
    );
  }

  /** The seller's row changed (called after the change commits). */
  sellerChanged(sellerId: string): void {
    this.generation++;
    this.sellerTerms.delete(sellerId.toLowerCase());
  }

  /** Rate plans changed (called after the change commits): shared by many sellers, every seller's terms go. */
  ratePlansChanged(): void {
    this.generation++;
    this.sellerTerms.clear();
  }

  /** The user's flags, versions, sessions or accesses changed (called after the change commits). */
  userChanged(userId: string): void {
    this.generation++;
    this.users.delete(userId);
  }

  /** The API key was changed or deleted (called after the change commits). */
  apiKeyChanged(keyId: string): void {
    this.generation++;
    for (const [hash, entry] of this.apiKeys) if (entry.keyId === keyId) this.apiKeys.delete(hash);
  }

  private async through<T>(
    get: () => Entry<T> | undefined,
    set: (entry: Entry<T>) => void,
    load: () => Promise<T | null>,
  ): Promise<T | null> {
    if (!this.listening) return load();
    const hit = get();
    const now = Date.now();
    if (hit && hit.expiresAt > now) return hit.value;
    const generation = this.generation;
    const value = await load();
    // Stored only when nothing was invalidated meanwhile and the invalidations still arrive.
    if (value !== null && generation === this.generation && this.listening) {
      set({ value, expiresAt: now + this.ttlMs });
    }
    return value;
  }

  private clear(): void {
    this.generation++;
    this.users.clear();
    this.apiKeys.clear();
    this.sellerTerms.clear();
  }

  /** How many change notifications this process has received (a test waits on them after a change made behind its back). */
  get notificationsHeard(): number {
    return this.heardCount;
  }

  /** The payloads of the notifications received after the first `count` (the last 100 at most). */
  payloadsHeardSince(count: number): string[] {
    return this.heard.slice(Math.max(0, this.heard.length - (this.heardCount - count)));
  }

  private onNotification(message: Notification): void {
    const payload = message.payload ?? '';
    this.heardCount++;
    if (this.heard.push(payload) > 100) this.heard.shift();
    const colon = payload.indexOf(':');
    const kind = payload.slice(0, colon);
    const id = payload.slice(colon + 1);
    if (kind === 'user') this.userChanged(id);
    else if (kind === 'api_key') this.apiKeyChanged(id);
    else if (kind === 'seller') this.sellerChanged(id);
    else if (kind === 'rate_plans') this.ratePlansChanged();
    else this.clear();
  }

  private async connect(): Promise<void> {
    if (this.stopped || this.client) return;
    const client = new Client({
      connectionString: this.config.databaseListenUrl,
      application_name: 'payments-credential-events',
      connectionTimeoutMillis: 2000,
      keepAlive: true,
    });
    client.on('notification', (message) => this.onNotification(message));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CREDENTIALS_CHANNEL}`);
    } catch (error) {
      client.end().catch(() => undefined);
      this.logger.warn(`Credential change notifications unavailable (${(error as Error).message}); retrying`);
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    // Whatever changed while nobody listened is unknown: start empty.
    this.clear();
    this.client = client;
    this.lastAnswer = Date.now();
  }

  private beat(): void {
    const client = this.client;
    if (!client) return;
    // A heartbeat that hangs (a silent network) makes `listening` false at once; after a few
    // seconds the connection is replaced.
    if (Date.now() - this.lastAnswer > 5 * HEARTBEAT_FRESH_MS) return this.lost(client);
    if (this.heartbeatInFlight) return;
    this.heartbeatInFlight = true;
    client
      .query('SELECT 1')
      .then(
        () => {
          if (this.client === client) this.lastAnswer = Date.now();
        },
        () => this.lost(client),
      )
      .finally(() => {
        if (this.client === client) this.heartbeatInFlight = false;
      });
  }

  private lost(client: Client): void {
    if (this.client !== client) return;
    this.logger.warn('Credential change notifications lost: the credential cache is bypassed until they are back');
    this.drop();
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private drop(): void {
    this.client = undefined;
    this.heartbeatInFlight = false;
    this.clear();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    clearTimeout(this.reconnect);
    this.reconnect = setTimeout(() => void this.connect(), RECONNECT_MS).unref();
  }
}
