import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A merchant and its main unified account (its id is the account id of the spec's paths). */
@Entity('sellers')
export class Seller {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column('text')
  name: string;

  /** CPF or CNPJ, digits only. */
  @Column('text')
  document: string;

  @Column('text')
  email: string;

  @Column('uuid', { name: 'rate_plan_id', nullable: true })
  ratePlanId: string | null;

  /** Applied on top of the rate plan; its rate plan is the seller's. */
  @Column('uuid', { name: 'split_plan_id', nullable: true })
  splitPlanId: string | null;

  /** Unified account that receives the `Programador` shares. */
  @Column('uuid', { name: 'developer_account', nullable: true })
  developerAccount: string | null;

  /** Split-table label → unified account id. */
  @Column('jsonb', { name: 'split_participants', default: {} })
  splitParticipants: Record<string, string>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
