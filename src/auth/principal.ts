import type { FastifyRequest } from 'fastify';

/** Who is calling, as the authentication guard established it (`request.user`). */
export type Principal = UserPrincipal | ApiKeyPrincipal;

export interface UserPrincipal {
  kind: 'user';
  id: string;
  isSuperuser: boolean;
  /** The user's access version, read with the user: which cached access entries are current. */
  accessVersion: string;
  /** Identity of the credential, e.g. for Idempotency-Key scoping. */
  credentialId: string;
}

export interface ApiKeyPrincipal {
  kind: 'api_key';
  id: string;
  sellerId: string;
  credentialId: string;
}

export type AuthenticatedRequest = FastifyRequest & { user: Principal };
