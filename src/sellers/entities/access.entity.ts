import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { Permission } from '../../auth/permissions';

/** An entry of the access table: a user, a seller and the user's permissions there. */
@Entity('accesses')
export class Access {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  @Column('uuid', { name: 'seller_id' })
  sellerId: string;

  @Column('text', { array: true })
  permissions: Permission[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
