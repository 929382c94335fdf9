import { Injectable } from '@nestjs/common';
import { UsersRepository } from './users.repository';

export interface UserRef {
  id: string;
  email: string;
}

/** Finding a user by id or e-mail, for other areas (granting an access names a user). */
@Injectable()
export class UserDirectory {
  constructor(private readonly users: UsersRepository) {}

  async find(by: { id: string } | { email: string }): Promise<UserRef | null> {
    const user = 'id' in by ? await this.users.findById(by.id) : await this.users.findByEmail(by.email);
    return user ? { id: user.id, email: user.email } : null;
  }
}
