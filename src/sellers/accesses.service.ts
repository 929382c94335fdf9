import { Inject, Injectable } from '@nestjs/common';
import { UsersRepository } from '../auth/users.repository';
import type { Permission } from '../auth/permissions';
import { ConflictError, NotFoundError, ValidationError } from '../common/errors/api-error';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { AccessResponseDto, CreateAccessDto } from './dto/access.dto';
import { SellersRepository } from './sellers.repository';
import { isUniqueViolation } from '../common/errors/database-errors';

/** The access table of a seller: who may do what there. */
@Injectable()
export class AccessesService {
  constructor(
    @Inject(SellersRepository) private readonly sellers: SellersRepository,
    @Inject(UsersRepository) private readonly users: UsersRepository,
  ) {}

  async grant(sellerId: string, input: CreateAccessDto): Promise<AccessResponseDto> {
    if ((input.user === undefined) === (input.email === undefined)) {
      throw ValidationError.of('user', 'give either user (an id) or email');
    }
    const user = input.user ? await this.users.findById(input.user) : await this.users.findByEmail(input.email!);
    if (!user) throw ValidationError.of(input.user ? 'user' : 'email', 'must name an existing user');
    try {
      return AccessResponseDto.of(
        await this.sellers.createAccess({ sellerId, userId: user.id, permissions: input.permissions }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError('access_exists', 'This user already has an access to the seller; update it instead.');
      }
      throw error;
    }
  }

  async list(sellerId: string, page: PageRequest): Promise<Page<AccessResponseDto>> {
    return toPage(await this.sellers.listAccesses(sellerId, page), page, (a) => a.seq, AccessResponseDto.of);
  }

  async update(sellerId: string, id: string, permissions: Permission[]): Promise<AccessResponseDto> {
    await this.find(sellerId, id);
    await this.sellers.updateAccess(sellerId, id, permissions);
    return AccessResponseDto.of(await this.find(sellerId, id));
  }

  async revoke(sellerId: string, id: string): Promise<void> {
    await this.find(sellerId, id);
    await this.sellers.deleteAccess(sellerId, id);
  }

  private async find(sellerId: string, id: string) {
    const access = await this.sellers.findAccess(sellerId, id);
    if (!access) throw new NotFoundError('Access not found.', 'access_not_found');
    return access;
  }
}
