import { Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { BadRequestError, ForbiddenError, NotFoundError } from '../common/errors/api-error';
import { SellersService } from '../sellers/sellers.service';
import type { Permission } from './permissions';
import type { Principal } from './principal';

export interface SellerCheck {
  permission?: Permission;
  unknownSellerIsBadRequest?: boolean;
}

/**
 * May this principal act on this seller? A seller's API key acts as its seller only; a user
 * needs an entry in the access table (and the permission, when one is named); superusers
 * pass. A seller the caller cannot see answers exactly like one that does not exist (404),
 * so nothing leaks about other sellers.
 */
@Injectable()
export class AuthorizationService {
  constructor(@Inject(SellersService) private readonly sellers: SellersService) {}

  async authorizeSeller(principal: Principal, sellerId: string, check: SellerCheck = {}): Promise<void> {
    const unknownSeller = () =>
      check.unknownSellerIsBadRequest
        ? new BadRequestError('seller_not_found', 'Seller not found.')
        : new NotFoundError('Seller not found.', 'seller_not_found');

    if (!isUUID(sellerId)) throw unknownSeller();
    if (principal.kind === 'api_key') {
      if (principal.sellerId.toLowerCase() !== sellerId.toLowerCase()) throw unknownSeller();
      return;
    }
    const known = principal.sellerAccess?.sellerId === sellerId ? principal.sellerAccess : undefined;
    if (principal.isSuperuser) {
      if (!(known ? known.exists : await this.sellers.sellerExists(sellerId))) throw unknownSeller();
      return;
    }
    const access = known
      ? { sellerExists: known.exists, permissions: known.permissions }
      : await this.sellers.sellerAccess(sellerId, principal.id);
    if (!access.sellerExists || access.permissions === null) throw unknownSeller();
    if (check.permission && !access.permissions.includes(check.permission)) {
      throw new ForbiddenError(
        'permission_denied',
        `This action needs the "${check.permission}" permission on the seller.`,
      );
    }
  }

  /** Superusers only (creating sellers, confirming sandbox payments of any seller). */
  requireSuperuser(principal: Principal): void {
    if (principal.kind !== 'user' || !principal.isSuperuser) {
      throw new ForbiddenError('superuser_required', 'Only a superuser can do this.');
    }
  }
}
