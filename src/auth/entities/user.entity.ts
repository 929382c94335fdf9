import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('users')
export class User {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  /** Stored lower-cased; unique. */
  @Column('text')
  email: string;

  @Column('text')
  name: string;

  @Column('text', { name: 'password_hash' })
  passwordHash: string;

  @Column('boolean', { name: 'is_superuser', default: false })
  isSuperuser: boolean;

  /** A deactivated user cannot log in, and its tokens stop working at once. */
  @Column('boolean', { default: true })
  active: boolean;

  /** Bumped by a password reset: every token minted before it stops working. */
  @Column('integer', { name: 'token_version', default: 0 })
  tokenVersion: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
