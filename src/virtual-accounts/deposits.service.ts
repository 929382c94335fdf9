import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { recordAudit } from '../audit/audit-log';
import { ConflictError, ForbiddenError, NotFoundError } from '../common/errors/api-error';
import { formatMoney } from '../common/money/money';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { retryOnConflict } from '../database/retry';
import { JobQueue } from '../jobs/job-queue.service';
import { recordEvent, recordEvents } from '../webhooks/outbox';
import { BANKING_PORT, BankingPort } from './banking/banking-port';
import { DepositRow, DepositsRepository } from './deposits.repository';
import { DepositDto, DepositResponseDto, DepositsQueryDto } from './dto/virtual-account.dto';
import { LedgerRepository, PostedLine } from './ledger.repository';
import { amountInCents, postedOrThrow, virtualAccountNotFound } from './ledger-errors';

/** Turns unpaid pix and boleto deposits `expired` once their time is up. */
export const EXPIRE_DEPOSITS_JOB = 'virtual-accounts.expire-deposits';
const EXPIRY_BATCH = 500;

/** Who asks for a deposit: only a superuser (or the system itself) may credit money by hand. */
export interface DepositCaller {
  superuser: boolean;
}

/**
 * Deposits: money enters a virtual account only when it really arrives. A `pix` or `boleto`
 * deposit is `pending` (no posting, balance unchanged) with the payment instructions of the
 * payout port's bank, until the bank confirms the payment (sandbox: the confirm route), then it
 * is `completed` with its posting and the event `virtual_account.deposit`; unpaid ones become
 * `expired`. A `manual` deposit (superusers, with a reason) posts at once and writes an audit row.
 */
@Injectable()
export class DepositsService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly ledger: LedgerRepository,
    private readonly deposits: DepositsRepository,
    private readonly jobs: JobQueue,
    @Inject(BANKING_PORT) private readonly bank: BankingPort,
  ) {}

  onModuleInit(): void {
    this.jobs.define({
      name: EXPIRE_DEPOSITS_JOB,
      schedule: '* * * * *',
      handler: async () => {
        await this.expireDue(new Date());
      },
    });
  }

  async create(
    sellerId: string,
    accountId: string,
    input: DepositDto,
    caller: DepositCaller,
    now = new Date(),
  ): Promise<DepositResponseDto> {
    const method = input.method ?? 'pix';
    if (method === 'manual' && !caller.superuser) {
      throw new ForbiddenError('superuser_required', 'Only a superuser can make a manual deposit.');
    }
    const amount = amountInCents(input.amount);
    if (!(await this.ledger.findVirtualAccount(sellerId, accountId))) throw virtualAccountNotFound();
    const id = randomUUID();
    const deposit = {
      id,
      sellerId,
      accountId,
      amount,
      description: input.description ?? null,
      externalReference: input.external_reference ?? null,
    };
    if (method === 'manual') {
      return retryOnConflict(() =>
        requestTransaction(this.dataSource, async (manager) => {
          const posting = await this.post(manager, { ...deposit, method });
          const created = await this.deposits.insert(manager, {
            ...deposit,
            method,
            reason: input.reason!,
            pix: null,
            boleto: null,
            expiresAt: null,
            completion: { entryId: posting.entryId, at: now },
          });
          await recordAudit(manager, {
            action: 'virtual_account.manual_deposit',
            sellerId,
            target: { type: 'deposit', id },
            changes: {
              virtual_account: accountId,
              amount: formatMoney(amount),
              reason: input.reason,
              ...(input.external_reference !== undefined && { external_reference: input.external_reference }),
            },
          });
          return this.recordCompleted(manager, created);
        }),
      );
    }
    const instructions = await this.bank.collect({ depositId: id, amount, method, at: now });
    return requestTransaction(this.dataSource, async (manager) =>
      DepositResponseDto.of(
        await this.deposits.insert(manager, {
          ...deposit,
          method,
          reason: null,
          pix: instructions.pix,
          boleto: instructions.boleto,
          expiresAt: instructions.expiresAt,
          completion: null,
        }),
      ),
    );
  }

  async list(
    sellerId: string,
    accountId: string,
    query: DepositsQueryDto,
    page: PageRequest,
  ): Promise<Page<DepositResponseDto>> {
    if (!(await this.ledger.findVirtualAccount(sellerId, accountId))) throw virtualAccountNotFound();
    const rows = await this.deposits.listForAccount(accountId, { status: query.status }, page);
    return toPage(rows, page, (r) => r.seq, DepositResponseDto.of);
  }

  async get(sellerId: string, accountId: string, id: string): Promise<DepositResponseDto> {
    const deposit = await this.deposits.findForAccount(sellerId, accountId, id);
    if (!deposit) throw depositNotFound();
    return DepositResponseDto.of(deposit);
  }

  /** The seller a deposit belongs to (null: no such deposit), for authorising its confirmation. */
  sellerOf(id: string): Promise<string | null> {
    return this.deposits.sellerOf(id);
  }

  /** The bank says a pending deposit was paid: it is posted and completed. */
  async confirm(id: string, now = new Date()): Promise<DepositResponseDto> {
    return retryOnConflict(() =>
      requestTransaction(this.dataSource, async (manager) => {
        const deposit = await this.deposits.lockById(manager, id);
        if (!deposit) throw depositNotFound();
        if (deposit.status !== 'pending') {
          throw new ConflictError(
            'invalid_state',
            `Only pending deposits can be confirmed; this one is ${deposit.status}.`,
          );
        }
        if (deposit.expiresAt && deposit.expiresAt <= now) {
          throw new ConflictError('invalid_state', `The deposit expired at ${deposit.expiresAt.toISOString()}.`);
        }
        const posting = await this.post(manager, deposit);
        return this.recordCompleted(manager, await this.deposits.markCompleted(manager, id, posting.entryId, now));
      }),
    );
  }

  /** Expires the pending deposits whose time ran out by `now`; answers how many. */
  async expireDue(now: Date): Promise<number> {
    let expired = 0;
    for (;;) {
      const batch = await this.dataSource.transaction(async (manager) => {
        const rows = await this.deposits.expireDue(manager, now, EXPIRY_BATCH);
        await recordEvents(
          manager,
          rows.map((row) => ({
            type: 'virtual_account.deposit.expired',
            sellerId: row.sellerId,
            data: DepositResponseDto.of(row),
          })),
        );
        return rows.length;
      });
      expired += batch;
      if (batch < EXPIRY_BATCH) return expired;
    }
  }

  /** The deposit's journal entry: the account credited, the outside world's deposits account debited. */
  private async post(
    manager: EntityManager,
    deposit: Pick<
      DepositRow,
      'id' | 'sellerId' | 'accountId' | 'amount' | 'method' | 'description' | 'externalReference'
    >,
  ): Promise<PostedLine> {
    const source = await this.ledger.systemAccount('external:deposits');
    const lines = postedOrThrow(
      await this.ledger.post(manager, {
        kind: 'deposit',
        sellerId: deposit.sellerId,
        actingAccountId: deposit.accountId,
        description: deposit.description,
        externalReference: deposit.externalReference,
        lines: [
          {
            accountId: deposit.accountId,
            type: 'deposit',
            amount: deposit.amount,
            counterparty: {
              deposit: deposit.id,
              method: deposit.method,
              ...(deposit.externalReference ? { external_reference: deposit.externalReference } : {}),
            },
          },
          {
            accountId: source,
            type: 'external',
            amount: -deposit.amount,
            counterparty: { virtual_account: deposit.accountId },
          },
        ],
      }),
    );
    return lines.find((line) => line.accountId === deposit.accountId)!;
  }

  private async recordCompleted(manager: EntityManager, deposit: DepositRow): Promise<DepositResponseDto> {
    const view = DepositResponseDto.of(deposit);
    await recordEvent(manager, 'virtual_account.deposit', deposit.sellerId, view);
    return view;
  }
}

function depositNotFound(): NotFoundError {
  return new NotFoundError('Deposit not found.', 'deposit_not_found');
}
