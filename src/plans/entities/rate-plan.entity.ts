import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A fee table, mirrored from the central fee service by `rates:sync`; never written by the API. */
@Entity('rate_plans')
export class RatePlan {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column('text', { name: 'external_id' })
  externalId: string;

  @Column('text')
  name: string;

  @Column('text')
  description: string;

  @Column('boolean')
  active: boolean;

  @Column('jsonb')
  fees: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
