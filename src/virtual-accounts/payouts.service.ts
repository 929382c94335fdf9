import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { retryOnConflict } from '../database/retry';
import { JobQueue } from '../jobs/job-queue.service';
import { recordEvent } from '../webhooks/outbox';
import { BANKING_PORT, BankingPort, PayoutOutcome } from './banking/banking-port';
import { PostingResponseDto } from './dto/virtual-account.dto';
import { LedgerRepository } from './ledger.repository';
import { postedOrThrow } from './ledger-errors';
import { PayoutsRepository } from './payouts.repository';

/** Sends one payout through the payout port; queued in the transaction that reserved the money. */
export const PAYOUT_JOB = 'virtual-accounts.payout';
export interface PayoutJob {
  payoutId: string;
}
/** Every 10 minutes: payouts processing for over an hour are sent again (see reconcileStale). */
const PAYOUT_RECONCILE_JOB = 'virtual-accounts.payout-reconcile';
const STALE_AFTER_MINUTES = 60;
const RECONCILE_BATCH = 100;

/**
 * The second half of money leaving a virtual account: the payout job sends it through the payout
 * port (idempotent by payout id, so a retried job never pays twice) and records the outcome:
 * `completed`, or `failed` with a reversing journal entry that gives the money back and the event
 * `virtual_account.payout.failed`. An outcome the port cannot give (it throws) fails the job,
 * which pg-boss retries with backoff; the payout stays `processing` meanwhile.
 */
@Injectable()
export class PayoutsService implements OnModuleInit {
  private readonly logger = new Logger('Payouts');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly ledger: LedgerRepository,
    private readonly payouts: PayoutsRepository,
    private readonly jobs: JobQueue,
    @Inject(BANKING_PORT) private readonly bank: BankingPort,
  ) {}

  onModuleInit(): void {
    this.jobs.define<PayoutJob>({
      name: PAYOUT_JOB,
      handler: async ({ payoutId }) => void (await this.process(payoutId)),
      queue: { retryLimit: 50, retryDelay: 5, retryBackoff: true },
      // Sandbox payouts complete within seconds; a backlog drains at up to 16 jobs a second per process.
      concurrency: 8,
      pollingIntervalSeconds: 0.5,
    });
    this.jobs.define({
      name: PAYOUT_RECONCILE_JOB,
      schedule: '*/10 * * * *',
      handler: async () => void (await this.reconcileStale()),
    });
  }

  /**
   * Payouts still processing long after they began: their job's retries may have outlived the
   * queue's retention (a provider down for days), which would keep the money reserved for good.
   * Each is sent again here (the port is idempotent by payout id, and a payout settled meanwhile
   * is left alone); one the port still cannot answer for is tried again next run. Answers how
   * many it settled.
   */
  async reconcileStale(olderThanMinutes = STALE_AFTER_MINUTES): Promise<number> {
    let settled = 0;
    for (const payoutId of await this.payouts.findStale(olderThanMinutes, RECONCILE_BATCH)) {
      try {
        if (await this.process(payoutId)) settled++;
      } catch (error) {
        this.logger.warn({ err: error, payout: payoutId }, 'A stale payout is still unanswered; tried again later');
      }
    }
    return settled;
  }

  /** Sends a processing payout and settles it (true); a payout already settled is left alone (false). */
  async process(payoutId: string, now: () => Date = () => new Date()): Promise<boolean> {
    const payout = await this.payouts.findById(payoutId);
    if (!payout || payout.status !== 'processing') return false;
    const outcome = await this.bank.payOut({
      payoutId,
      amount: payout.amount,
      destination: payout.destination,
      description: payout.description,
    });
    await this.settle(payoutId, outcome, now());
    return true;
  }

  private async settle(payoutId: string, outcome: PayoutOutcome, at: Date): Promise<void> {
    await retryOnConflict(() =>
      this.dataSource.transaction(async (manager) => {
        const payout = await this.payouts.lockById(manager, payoutId);
        if (!payout || payout.status !== 'processing') return;
        if (outcome.status === 'completed') {
          await this.payouts.markCompleted(manager, payoutId, outcome.reference, at);
          return;
        }
        const [original] = await this.ledger.postingsOfEntry(manager, payout.entryId);
        const sink = await this.ledger.systemAccount(
          payout.kind === 'payment' ? 'external:payments' : 'external:transfers',
        );
        const reversal = postedOrThrow(
          await this.ledger.post(manager, {
            kind: 'reversal',
            sellerId: payout.sellerId,
            actingAccountId: payout.accountId,
            description: payout.description,
            externalReference: payout.entryId,
            lines: [
              {
                accountId: payout.accountId,
                type: 'reversal',
                amount: payout.amount,
                counterparty: { reverses: original.id, reason: outcome.reason },
              },
              {
                accountId: sink,
                type: 'external',
                amount: -payout.amount,
                counterparty: { virtual_account: payout.accountId },
              },
            ],
          }),
        );
        await this.payouts.markFailed(manager, payoutId, outcome.reason, reversal[0].entryId, at);
        const [failed] = await this.ledger.postingsOfEntry(manager, payout.entryId);
        await recordEvent(manager, 'virtual_account.payout.failed', payout.sellerId, PostingResponseDto.of(failed));
      }),
    );
  }
}
