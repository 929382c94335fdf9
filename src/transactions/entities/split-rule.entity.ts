import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { centsColumn } from '../../common/money/cents.column';

/** A split rule added to a transaction after it was created. Removal keeps the row (deleted_at). */
@Entity('transaction_split_rules')
export class SplitRule {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column('uuid', { name: 'transaction_id' })
  transactionId: string;

  @Column('uuid')
  recipient: string;

  @Column('text', { name: 'amount_type' })
  amountType: 'fixed' | 'percentage';

  @Column({ ...centsColumn('fixed_amount'), nullable: true })
  fixedAmount: number | null;

  /** Percentage units (1% = 10,000). */
  @Column('integer', { nullable: true })
  percentage: number | null;

  /** What the rule takes from the transaction, in cents. */
  @Column(centsColumn('amount_cents'))
  amountCents: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;
}
