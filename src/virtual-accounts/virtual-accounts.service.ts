import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { BadRequestError, ValidationError } from '../common/errors/api-error';
import { formatMoney, type Cents } from '../common/money/money';
import { AuditEntry, recordAudit } from '../audit/audit-log';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { instantOf } from '../common/validation/date-time.decorator';
import { retryOnConflict } from '../database/retry';
import { JobQueue } from '../jobs/job-queue.service';
import { BANKING_PORT, BankingPort, PayoutDestination } from './banking/banking-port';
import {
  PayDto,
  PostingResponseDto,
  PostingsQueryDto,
  TransferDto,
  VirtualAccountResponseDto,
} from './dto/virtual-account.dto';
import { LedgerRepository, LineType, SystemAccount, VirtualAccountRow } from './ledger.repository';
import { amountInCents, postedOrThrow, virtualAccountNotFound } from './ledger-errors';
import { PayoutsRepository } from './payouts.repository';
import { PAYOUT_JOB, PayoutJob } from './payouts.service';

interface Payout {
  kind: 'payment' | 'transfer';
  lineType: Extract<LineType, 'payment' | 'transfer_out'>;
  sink: SystemAccount;
  sellerId: string;
  accountId: string;
  amount: Cents;
  description: string | null;
  externalReference: string | null;
  destination: PayoutDestination;
}

/**
 * Virtual accounts: durable sub-ledgers of sub-accounts, kept in double entry. Every action
 * writes one journal entry whose lines sum to zero (system accounts stand for the outside
 * world), moves the cached balances of the virtual accounts it touches, locked in ascending id
 * order, and records its outbox events, in one database transaction. Money leaving the platform
 * is reserved at once and sent by the payout job (see PayoutsService); deposits are in
 * DepositsService.
 */
@Injectable()
export class VirtualAccountsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly ledger: LedgerRepository,
    private readonly payouts: PayoutsRepository,
    private readonly jobs: JobQueue,
    @Inject(BANKING_PORT) private readonly bank: BankingPort,
  ) {}

  /** Opens the virtual account of a new sub-account, in the caller's transaction. */
  open(manager: EntityManager, subaccount: { id: string; sellerId: string; name: string }): Promise<void> {
    return this.ledger.openVirtualAccount(manager, subaccount);
  }

  async list(sellerId: string, page: PageRequest): Promise<Page<VirtualAccountResponseDto>> {
    return toPage(
      await this.ledger.listVirtualAccounts(sellerId, page),
      page,
      (a) => a.seq,
      VirtualAccountResponseDto.of,
    );
  }

  async get(sellerId: string, id: string): Promise<VirtualAccountResponseDto> {
    return VirtualAccountResponseDto.of(await this.find(sellerId, id));
  }

  async postings(
    sellerId: string,
    id: string,
    query: PostingsQueryDto,
    page: PageRequest,
  ): Promise<Page<PostingResponseDto>> {
    await this.find(sellerId, id);
    const rows = await this.ledger.postings(
      id,
      {
        type: query.type,
        createdAfter: query.created_after ? instantOf(query.created_after) : undefined,
        createdBefore: query.created_before ? instantOf(query.created_before) : undefined,
      },
      page,
    );
    return toPage(rows, page, (r) => r.accountLine, PostingResponseDto.of);
  }

  /** Pays a bill: a payout to the outside, `processing` until the payout port answers. */
  async pay(sellerId: string, id: string, input: PayDto): Promise<PostingResponseDto> {
    return this.payOut({
      kind: 'payment',
      lineType: 'payment',
      sink: 'external:payments',
      sellerId,
      accountId: id,
      amount: amountInCents(input.amount),
      description: input.description ?? null,
      externalReference: input.barcode,
      destination: {
        payee: { name: input.payee.name, document: input.payee.document ?? null },
        barcode: input.barcode,
      },
    });
  }

  /** To another virtual account (completes at once), or out to a PIX key or bank account (a payout). */
  async transfer(sellerId: string, id: string, input: TransferDto): Promise<PostingResponseDto> {
    const amount = amountInCents(input.amount);
    const { pix_key: pixKey, bank_account: bank } = input.destination;
    const target = input.destination.virtual_account?.toLowerCase();
    if ([target, pixKey, bank].filter((d) => d !== undefined).length !== 1) {
      throw ValidationError.of('destination', 'must have exactly one of virtual_account, pix_key, bank_account');
    }
    const description = input.description ?? null;
    if (target !== undefined) return this.transferInside(sellerId, id, target, amount, description);
    return this.payOut({
      kind: 'transfer',
      lineType: 'transfer_out',
      sink: 'external:transfers',
      sellerId,
      accountId: id,
      amount,
      description,
      externalReference: null,
      destination: pixKey !== undefined ? { pix_key: pixKey } : { bank_account: { ...bank! } },
    });
  }

  private async transferInside(
    sellerId: string,
    id: string,
    target: string,
    amount: Cents,
    description: string | null,
  ): Promise<PostingResponseDto> {
    if (target === id) throw new BadRequestError('same_account', 'A virtual account cannot transfer to itself.');
    return retryOnConflict(() =>
      requestTransaction(this.dataSource, async (manager) => {
        // Before the movement, which is the transaction's last statement (written only if it commits).
        await recordAudit(
          manager,
          movementAudit('virtual_account.transfer', sellerId, id, amount, { virtual_account: target }, description),
        );
        // The whole transfer is one statement, sent with its COMMIT: each side's seller hears of
        // its own posting (the events are written with the lines).
        const lines = postedOrThrow(
          await this.ledger.post(
            manager,
            {
              kind: 'transfer',
              sellerId,
              actingAccountId: id,
              description,
              externalReference: null,
              lines: [
                { accountId: id, type: 'transfer_out', amount: -amount, counterparty: { virtual_account: target } },
                { accountId: target, type: 'transfer_in', amount, counterparty: { virtual_account: id } },
              ],
              events: { type: 'virtual_account.transfer', status: 'completed' },
            },
            { last: true },
          ),
        );
        const line = lines.find((l) => l.accountId === id)!;
        return PostingResponseDto.of({ ...line, status: 'completed', failureReason: null });
      }),
    );
  }

  /**
   * Money leaving the platform: the amount is taken from the account at once (reserved; refused
   * past the balance), and the payout job is queued in the same transaction, so a committed
   * posting always gets sent and nothing is sent for a refused one.
   */
  private async payOut(payout: Payout): Promise<PostingResponseDto> {
    const sink = await this.ledger.systemAccount(payout.sink);
    // The movement's name in its events and its audit row.
    const action = payout.kind === 'payment' ? 'virtual_account.payment' : 'virtual_account.transfer';
    return retryOnConflict(() =>
      requestTransaction(this.dataSource, async (manager) => {
        const lines = postedOrThrow(
          await this.ledger.post(manager, {
            kind: payout.kind,
            sellerId: payout.sellerId,
            actingAccountId: payout.accountId,
            description: payout.description,
            externalReference: payout.externalReference,
            lines: [
              {
                accountId: payout.accountId,
                type: payout.lineType,
                amount: -payout.amount,
                counterparty: payout.destination,
              },
              {
                accountId: sink,
                type: 'external',
                amount: payout.amount,
                counterparty: { virtual_account: payout.accountId },
              },
            ],
            events: { type: action, status: 'processing' },
          }),
        );
        const posted = lines.find((line) => line.accountId === payout.accountId)!;
        const payoutId = await this.payouts.insert(manager, {
          sellerId: payout.sellerId,
          accountId: payout.accountId,
          entryId: posted.entryId,
          kind: payout.kind,
          amount: payout.amount,
          destination: payout.destination,
          provider: this.bank.name,
        });
        await this.jobs.send<PayoutJob>(PAYOUT_JOB, { payoutId }, {}, manager);
        await recordAudit(
          manager,
          movementAudit(
            action,
            payout.sellerId,
            payout.accountId,
            payout.amount,
            payout.destination,
            payout.description,
            payoutId,
          ),
        );
        return PostingResponseDto.of({ ...posted, status: 'processing', failureReason: null });
      }),
    );
  }

  private async find(sellerId: string, id: string): Promise<VirtualAccountRow> {
    const account = await this.ledger.findVirtualAccount(sellerId, id);
    if (!account) throw virtualAccountNotFound();
    return account;
  }
}

/** The audit entry of money a person moves out of a virtual account (API.md section 12: money-affecting). */
function movementAudit(
  action: 'virtual_account.transfer' | 'virtual_account.payment',
  sellerId: string,
  accountId: string,
  amount: Cents,
  destination: PayoutDestination | { virtual_account: string },
  description: string | null,
  /** The payout that sends it out of the platform, if any. */
  payoutId?: string,
): AuditEntry {
  return {
    action,
    sellerId,
    target: { type: 'virtual_account', id: accountId },
    changes: {
      amount: formatMoney(amount),
      destination,
      ...(description !== null && { description }),
      ...(payoutId !== undefined && { payout: payoutId }),
    },
  };
}
