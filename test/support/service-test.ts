import type { Type } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { UserPrincipal } from '../../src/auth/principal';
import { runInRequestContext } from '../../src/common/context/request-context';
import type { TestUser } from './identity';
import type { TestApp } from './test-app';

/**
 * Helpers of the service tier: a service is built with `new` from the app's real repositories
 * (real PostgreSQL) and fakes of its ports, and called directly, without HTTP.
 */

/** The principal the guard would make of this user's access token now (superuser flag and access version read). */
export async function userPrincipal(t: TestApp, user: Pick<TestUser, 'id'>): Promise<UserPrincipal> {
  const { rows } = await t.db.query('SELECT is_superuser, access_version FROM users WHERE id = $1', [user.id]);
  return {
    kind: 'user',
    id: user.id,
    isSuperuser: rows[0].is_superuser,
    accessVersion: rows[0].access_version,
    credentialId: `session-of-${user.id}`,
  };
}

/** Runs `work` as a request of `principal` would (the audit log reads the actor from there). */
export function asRequestOf<T>(
  principal: UserPrincipal,
  work: () => Promise<T>,
  requestId = 'req-service-test',
): Promise<T> {
  const request = { user: principal } as unknown as FastifyRequest;
  return runInRequestContext({ requestId, ip: '203.0.113.7', request }, work);
}

export interface AuditRow {
  action: string;
  actor_kind: string;
  actor_id: string | null;
  seller_id: string | null;
  changes: Record<string, unknown>;
  request_id: string | null;
}

/** The audit rows written about one record, oldest first. */
export async function auditOf(t: TestApp, targetId: string): Promise<AuditRow[]> {
  const { rows } = await t.db.query(
    `SELECT action, actor_kind, actor_id, seller_id, changes, request_id FROM audit_log WHERE target_id = $1 ORDER BY seq`,
    [targetId],
  );
  return rows;
}

/**
 * The service as Nest would build it, from the app's own providers, except the ports given in
 * `fakes` (token → fake), in the manner of immich's `newTestService`. The constructor's tokens
 * come from its decorator metadata, so a service that gains a dependency needs no test change.
 */
export function newTestService<T>(t: TestApp, service: Type<T>, fakes: Array<[unknown, unknown]> = []): T {
  const types: unknown[] = Reflect.getMetadata('design:paramtypes', service) ?? [];
  const injected: Array<{ index: number; param: unknown }> = Reflect.getMetadata('self:paramtypes', service) ?? [];
  const replaced = new Map(fakes);
  const args = types.map((type, index) => {
    const token = injected.find((p) => p.index === index)?.param ?? type;
    return replaced.has(token) ? replaced.get(token) : t.app.get(token as Type, { strict: false });
  });
  return new service(...args);
}
