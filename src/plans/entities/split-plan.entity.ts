import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A global, immutable split plan applied on top of a rate plan (spec 2.3). */
@Entity('split_plans')
export class SplitPlan {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column('text')
  name: string;

  @Column('uuid', { name: 'rate_plan_id' })
  ratePlanId: string;

  /** JSON document as a string (single quotes already normalised): card-present split table. */
  @Column('text', { name: 'split_details' })
  splitDetails: string;

  /** Same format, for online / manually keyed payments. */
  @Column('text', { name: 'split_details_online' })
  splitDetailsOnline: string;

  @Column('boolean', { name: 'automatic_developer_fee', default: true })
  automaticDeveloperFee: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
