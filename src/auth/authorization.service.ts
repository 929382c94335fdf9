import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { noteSellerAuthorized } from '../common/context/request-context';
import { BadRequestError, ForbiddenError, NotFoundError } from '../common/errors/api-error';
import { AccessesRepository, SellerAccess } from '../sellers/accesses.repository';
import type { AccessRule } from './access.decorators';
import type { Permission } from './permissions';
import type { Principal, UserPrincipal } from './principal';

export interface SellerCheck {
  permission?: Permission;
  /** A seller named in the body: one the caller cannot see is a 400. */
  unknownSellerIsBadRequest?: boolean;
  /** A seller found from a record: one the caller cannot see is that record not found (404 with this code). */
  hiddenAs?: { code: string; message: string };
}

/**
 * Every authorisation decision, in one place: the route rules of `@Authenticated` (credential
 * kind, superuser, seller and permission), the checks services make on a seller known only
 * from a record, and the rules of the access table and of the seller's commercial terms. A
 * user's access is read through the access table's one door (AccessesRepository.accessOf).
 */
@Injectable()
export class AuthorizationService {
  constructor(private readonly accesses: AccessesRepository) {}

  /** The route's declared rule, for an authenticated principal (the global guard). */
  async authorize(principal: Principal, rule: AccessRule, params: Record<string, string>): Promise<void> {
    if (principal.kind === 'api_key' && rule.credentials === 'jwt') {
      throw new ForbiddenError('api_key_not_allowed', 'API keys cannot be used on this route; use a user token.');
    }
    if (principal.kind === 'user' && rule.credentials === 'api_key') {
      throw new ForbiddenError('jwt_not_allowed', 'This route takes a seller API key, not a user token.');
    }
    if (rule.superuser) this.requireSuperuser(principal);
    // Not noted for replays (see authorizeSeller): the guard checks the route's rule on every request.
    if (rule.seller) await this.checkSeller(principal, params[rule.seller], rule);
  }

  /**
   * May this principal act on this seller? A seller's API key acts as its seller only; a user
   * needs an entry in the access table (and the permission, when one is named); superusers
   * pass. A seller the caller cannot see answers exactly like one that does not exist (404),
   * so nothing leaks about other sellers. For a seller known from the body or a record, not the
   * route: the check is noted, and a replay of the request's Idempotency-Key makes it again.
   */
  async authorizeSeller(principal: Principal, sellerId: string, check: SellerCheck = {}): Promise<void> {
    await this.checkSeller(principal, sellerId, check);
    noteSellerAuthorized({
      seller: sellerId.toLowerCase(),
      ...(check.permission && { permission: check.permission }),
      ...(check.unknownSellerIsBadRequest && { unknownSellerIsBadRequest: true }),
      ...(check.hiddenAs && { hiddenAs: { code: check.hiddenAs.code, message: check.hiddenAs.message } }),
    });
  }

  private async checkSeller(principal: Principal, sellerId: string, check: SellerCheck): Promise<void> {
    const unknownSeller = () =>
      check.unknownSellerIsBadRequest
        ? new BadRequestError('seller_not_found', 'Seller not found.')
        : new NotFoundError(check.hiddenAs?.message ?? 'Seller not found.', check.hiddenAs?.code ?? 'seller_not_found');

    if (!isUUID(sellerId)) throw unknownSeller();
    if (principal.kind === 'api_key') {
      if (principal.sellerId.toLowerCase() !== sellerId.toLowerCase()) throw unknownSeller();
      return;
    }
    if (principal.isSuperuser) {
      if (!(await this.accesses.sellerExists(sellerId))) throw unknownSeller();
      return;
    }
    const access = await this.accessOf(principal, sellerId);
    if (!access.sellerExists || access.permissions === null) throw unknownSeller();
    if (check.permission && !access.permissions.includes(check.permission)) {
      throw new ForbiddenError(
        'permission_denied',
        `This action needs the "${check.permission}" permission on the seller.`,
      );
    }
  }

  /** Superusers only (creating sellers, commercial terms, users admin, the audit log). */
  requireSuperuser(principal: Principal): void {
    if (principal.kind !== 'user' || !principal.isSuperuser) {
      throw new ForbiddenError('superuser_required', 'Only a superuser can do this.');
    }
  }

  /**
   * Writing a seller's access table (API.md section 3): a user grants, and takes away, only
   * permissions it holds itself on that seller (so deleting an entry needs all of its
   * permissions), and never changes or deletes its own entry; superusers do anything.
   * `entry` is the entry written (its user, and its permissions before: none for a new one);
   * `permissions` the permissions it will have (none for a deletion).
   */
  async authorizeAccessChange(
    principal: UserPrincipal,
    sellerId: string,
    entry: { userId: string; permissions: Permission[] },
    permissions: Permission[],
  ): Promise<void> {
    if (principal.isSuperuser) return;
    if (entry.userId === principal.id) {
      throw new ForbiddenError('own_access_not_changeable', 'You cannot change or delete your own access entry.');
    }
    const held = (await this.accessOf(principal, sellerId)).permissions ?? [];
    // Taking a permission away is changing it too: a manager cannot strip (or delete the entry
    // of) someone who holds more than it does.
    const added = permissions.filter((p) => !entry.permissions.includes(p));
    const removed = entry.permissions.filter((p) => !permissions.includes(p));
    const notHeld = [...added, ...removed].filter((p) => !held.includes(p));
    if (notHeld.length > 0) {
      throw new ForbiddenError(
        'permission_not_grantable',
        `You can grant or take away only permissions you hold on this seller; you do not hold ${notHeld.map((p) => `"${p}"`).join(', ')}.`,
      );
    }
  }

  private accessOf(principal: UserPrincipal, sellerId: string): Promise<SellerAccess> {
    return this.accesses.accessOf(principal.id, sellerId, principal.accessVersion);
  }
}
