import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A seller's API key. The secret itself is never stored: only its SHA-256 and last 4 characters. */
@Entity('api_keys')
export class ApiKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column('uuid', { name: 'seller_id' })
  sellerId: string;

  @Column('text', { name: 'key_hash', select: false })
  keyHash: string;

  @Column('text', { name: 'key_suffix' })
  keySuffix: string;

  @Column('text')
  label: string;

  @Column('text')
  description: string;

  @Column('boolean', { default: true })
  active: boolean;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true, select: false })
  deletedAt: Date | null;
}
