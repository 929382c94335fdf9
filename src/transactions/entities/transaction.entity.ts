import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { centsColumn } from '../../common/money/cents.column';
import type { EntryMode, PaymentType } from '../../split/table';

export type TransactionStatus = 'pending' | 'approved' | 'declined' | 'voided';

/** A share of the resolution, as stored with the transaction (cents and percentage units). */
export interface StoredShare {
  label: string;
  role: 'developer' | 'participant';
  units: number;
  amount: number;
  recipient: string | null;
}

/**
 * A unified transaction. Its fee and split resolution are computed once, at creation, and
 * stored: later plan changes never rewrite history. Only brand and last 4 digits of a card
 * are kept.
 */
@Entity('transactions')
export class Transaction {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column('uuid', { name: 'seller_id' })
  sellerId: string;

  @Column(centsColumn())
  amount: number;

  @Column('text')
  currency: string;

  @Column('text', { name: 'payment_type' })
  paymentType: PaymentType;

  @Column('integer')
  installments: number;

  @Column('text', { name: 'card_brand', nullable: true })
  cardBrand: string | null;

  @Column('text', { name: 'card_last4', nullable: true })
  cardLast4: string | null;

  @Column('text', { name: 'entry_mode' })
  entryMode: EntryMode;

  @Column('text')
  status: TransactionStatus;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('text')
  source: string;

  @Column('text', { nullable: true })
  reference: string | null;

  @Column('jsonb', { nullable: true })
  customer: { name?: string; email?: string; document?: string } | null;

  @Column('uuid', { name: 'rate_plan_id' })
  ratePlanId: string;

  @Column('uuid', { name: 'split_plan_id', nullable: true })
  splitPlanId: string | null;

  @Column('integer', { name: 'fee_percentage' })
  feePercentage: number;

  @Column(centsColumn('fee_fixed'))
  feeFixed: number;

  @Column(centsColumn('fee_amount'))
  feeAmount: number;

  @Column('jsonb')
  shares: StoredShare[];

  @Column(centsColumn('developer_amount'))
  developerAmount: number;

  @Column(centsColumn('participants_amount'))
  participantsAmount: number;

  @Column(centsColumn('seller_net'))
  sellerNet: number;

  @Column('text')
  processor: string;

  @Column('text', { name: 'processor_reference', nullable: true })
  processorReference: string | null;

  @Column('text', { name: 'decline_reason', nullable: true })
  declineReason: string | null;

  @Column('jsonb', { nullable: true })
  pix: { qr_code: string; expires_at: string } | null;

  @Column('jsonb', { nullable: true })
  boleto: { digitable_line: string; due_date: string } | null;

  /** Until when a pending pix or boleto charge can be paid (see payableUntil); null for the others. */
  @Column('timestamptz', { name: 'payable_until', nullable: true })
  payableUntil: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column('timestamptz', { name: 'approved_at', nullable: true })
  approvedAt: Date | null;

  @Column('timestamptz', { name: 'voided_at', nullable: true })
  voidedAt: Date | null;

  @Column('text', { name: 'void_reason', nullable: true })
  voidReason: string | null;

  /**
   * The void the processor has still to acknowledge: the token of the latest void job queued for
   * the charge; null once the processor took it (or for a charge never voided).
   */
  @Column('uuid', { name: 'processor_void_token', nullable: true })
  processorVoidToken: string | null;
}
