import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ChargeStatus } from './payment-processor';

interface SandboxChargeRow {
  status: ChargeStatus['status'];
  reference: string;
  decline_reason: string | null;
  pix: { qr_code: string; expires_at: string } | null;
  boleto: { digitable_line: string; due_date: string } | null;
}

const COLUMNS = 'status, reference, decline_reason, pix, boleto';

function toChargeStatus(row: SandboxChargeRow): ChargeStatus {
  switch (row.status) {
    case 'declined':
      return { status: 'declined', reference: row.reference, declineReason: row.decline_reason ?? 'card_declined' };
    case 'pending':
      return {
        status: 'pending',
        reference: row.reference,
        ...(row.pix ? { pix: row.pix } : {}),
        ...(row.boleto ? { boleto: row.boleto } : {}),
      };
    default:
      return { status: row.status, reference: row.reference };
  }
}

/**
 * The sandbox processor's side of the books (`sandbox_charges`): the charges it received, by
 * idempotency key, as a real processor keeps them. Shared by every API process.
 */
@Injectable()
export class SandboxChargesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Stores the charge unless one with this key exists; answers the charge stored under the key (one round trip). */
  async insertOnce(transactionId: string, charge: ChargeStatus): Promise<ChargeStatus> {
    const rows: SandboxChargeRow[] = await this.dataSource.query(
      `WITH inserted AS (
         INSERT INTO sandbox_charges (transaction_id, status, reference, decline_reason, pix, boleto)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)
         ON CONFLICT (transaction_id) DO NOTHING
         RETURNING ${COLUMNS})
       SELECT ${COLUMNS} FROM inserted
       UNION ALL
       SELECT ${COLUMNS} FROM sandbox_charges WHERE transaction_id = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`,
      [
        transactionId,
        charge.status,
        charge.reference,
        charge.status === 'declined' ? charge.declineReason : null,
        charge.status === 'pending' && charge.pix ? JSON.stringify(charge.pix) : null,
        charge.status === 'pending' && charge.boleto ? JSON.stringify(charge.boleto) : null,
      ],
    );
    return toChargeStatus(rows[0]);
  }

  async find(transactionId: string): Promise<ChargeStatus | null> {
    const rows: SandboxChargeRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM sandbox_charges WHERE transaction_id = $1`,
      [transactionId],
    );
    return rows.length === 0 ? null : toChargeStatus(rows[0]);
  }

  async markVoided(transactionId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE sandbox_charges SET status = 'voided', voided_at = now()
       WHERE transaction_id = $1 AND status IN ('approved', 'pending')`,
      [transactionId],
    );
  }
}
