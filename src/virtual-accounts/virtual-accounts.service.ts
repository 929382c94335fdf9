import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { BadRequestError, NotFoundError, ValidationError } from '../common/errors/api-error';
import { checkMoney, Cents } from '../common/money/money';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { retryOnConflict } from '../database/retry';
import { normaliseDocument } from '../sellers/document';
import type { EventType } from '../webhooks/outbox';
import {
  DepositDto,
  PayDto,
  PostingResponseDto,
  PostingsQueryDto,
  TransferDto,
  VirtualAccountResponseDto,
} from './dto/virtual-account.dto';
import { EntryKind, LedgerRepository, NewLine, VirtualAccountRow } from './ledger.repository';

interface Movement {
  kind: EntryKind;
  event: EventType;
  sellerId: string;
  /** The virtual account the request acts on: its posting is the answer. */
  accountId: string;
  description: string | null;
  externalReference: string | null;
  lines: NewLine[];
}

/**
 * Virtual accounts: durable sub-ledgers of sub-accounts, kept in double entry. Every action
 * writes one journal entry whose lines sum to zero (system accounts stand for the outside
 * world), moves the cached balances of the virtual accounts it touches, locked in ascending id
 * order, and records its outbox events, all in one statement.
 */
@Injectable()
export class VirtualAccountsService {
  constructor(private readonly ledger: LedgerRepository) {}

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
        createdAfter: query.created_after ? new Date(query.created_after) : undefined,
        createdBefore: query.created_before ? new Date(query.created_before) : undefined,
      },
      page,
    );
    return toPage(rows, page, (r) => r.accountLine, PostingResponseDto.of);
  }

  async deposit(sellerId: string, id: string, input: DepositDto): Promise<PostingResponseDto> {
    const amount = cents(input.amount);
    const source = await this.ledger.systemAccount('external:deposits');
    const counterparty = input.external_reference ? { external_reference: input.external_reference } : null;
    return this.post({
      kind: 'deposit',
      event: 'virtual_account.deposit',
      sellerId,
      accountId: id,
      description: input.description ?? null,
      externalReference: input.external_reference ?? null,
      lines: [
        { accountId: id, type: 'deposit', amount, counterparty },
        { accountId: source, type: 'external', amount: -amount, counterparty: { virtual_account: id } },
      ],
    });
  }

  async pay(sellerId: string, id: string, input: PayDto): Promise<PostingResponseDto> {
    if (input.payee.document !== undefined && !normaliseDocument(input.payee.document)) {
      throw ValidationError.of('payee.document', 'must be a valid CPF or CNPJ');
    }
    const amount = cents(input.amount);
    const sink = await this.ledger.systemAccount('external:payments');
    const counterparty = {
      payee: { name: input.payee.name, document: input.payee.document ?? null },
      barcode: input.barcode,
    };
    return this.post({
      kind: 'payment',
      event: 'virtual_account.payment',
      sellerId,
      accountId: id,
      description: input.description ?? null,
      externalReference: input.barcode,
      lines: [
        { accountId: id, type: 'payment', amount: -amount, counterparty },
        { accountId: sink, type: 'external', amount, counterparty: { virtual_account: id } },
      ],
    });
  }

  async transfer(sellerId: string, id: string, input: TransferDto): Promise<PostingResponseDto> {
    const amount = cents(input.amount);
    const { pix_key: pixKey, bank_account: bank } = input.destination;
    const target = input.destination.virtual_account?.toLowerCase();
    if ([target, pixKey, bank].filter((d) => d !== undefined).length !== 1) {
      throw ValidationError.of('destination', 'must have exactly one of virtual_account, pix_key, bank_account');
    }
    let lines: NewLine[];
    if (target !== undefined) {
      if (target === id) {
        throw new BadRequestError('same_account', 'A virtual account cannot transfer to itself.');
      }
      lines = [
        { accountId: id, type: 'transfer_out', amount: -amount, counterparty: { virtual_account: target } },
        { accountId: target, type: 'transfer_in', amount, counterparty: { virtual_account: id } },
      ];
    } else {
      if (bank && !normaliseDocument(bank.document)) {
        throw ValidationError.of('destination.bank_account.document', 'must be a valid CPF or CNPJ');
      }
      const sink = await this.ledger.systemAccount('external:transfers');
      const counterparty = pixKey !== undefined ? { pix_key: pixKey } : { bank_account: { ...bank } };
      lines = [
        { accountId: id, type: 'transfer_out', amount: -amount, counterparty },
        { accountId: sink, type: 'external', amount, counterparty: { virtual_account: id } },
      ];
    }
    return this.post({
      kind: 'transfer',
      event: 'virtual_account.transfer',
      sellerId,
      accountId: id,
      description: input.description ?? null,
      externalReference: null,
      lines,
    });
  }

  /**
   * One movement, posted in one statement (see LedgerRepository.post): the virtual accounts are
   * locked in ascending id order, so movements never deadlock; a refused movement writes nothing.
   */
  private async post(movement: Movement): Promise<PostingResponseDto> {
    const result = await retryOnConflict(() =>
      this.ledger.post({
        kind: movement.kind,
        sellerId: movement.sellerId,
        actingAccountId: movement.accountId,
        description: movement.description,
        externalReference: movement.externalReference,
        event: movement.event,
        lines: movement.lines,
      }),
    );
    if (result === 'account_not_found') throw notFound();
    if (result === 'destination_not_found') {
      throw new BadRequestError('destination_not_found', 'The destination virtual account does not exist.');
    }
    if (result === 'insufficient_funds') {
      throw new BadRequestError('insufficient_funds', 'The virtual account does not hold enough funds.');
    }
    if (result === 'balance_limit') {
      throw new BadRequestError(
        'balance_limit_exceeded',
        'A virtual account cannot hold more than 1,000,000,000,000.00.',
      );
    }
    return PostingResponseDto.of(result.find((r) => r.accountId === movement.accountId)!);
  }

  private async find(sellerId: string, id: string): Promise<VirtualAccountRow> {
    const account = await this.ledger.findVirtualAccount(sellerId, id);
    if (!account) throw notFound();
    return account;
  }
}

function notFound(): NotFoundError {
  return new NotFoundError('Virtual account not found.', 'virtual_account_not_found');
}

function cents(amount: string): Cents {
  const checked = checkMoney(amount);
  if (!checked.ok) throw ValidationError.of('amount', checked.message);
  return checked.value;
}
