import type { FastifyRequest } from 'fastify';
import type { Permission } from './permissions';

/** Who is calling, as the authentication guard established it (`request.user`). */
export type Principal = UserPrincipal | ApiKeyPrincipal;

export interface UserPrincipal {
  kind: 'user';
  id: string;
  isSuperuser: boolean;
  /** The user's access to the seller the route acts on, read with the user (see AccessGuard). */
  sellerAccess?: { sellerId: string; exists: boolean; permissions: Permission[] | null };
  /** Identity of the credential, e.g. for Idempotency-Key scoping. */
  credentialId: string;
}

export interface ApiKeyPrincipal {
  kind: 'api_key';
  id: string;
  sellerId: string;
  credentialId: string;
}

export type AuthenticatedRequest = FastifyRequest & {
  user: Principal;
  /** Set by the guard before authentication: the seller the route acts on. */
  routeSellerId?: string;
};
