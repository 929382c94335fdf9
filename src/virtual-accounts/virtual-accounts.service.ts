import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { BadRequestError, NotFoundError, ValidationError } from '../common/errors/api-error';
import { checkMoney, Cents } from '../common/money/money';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { retryOnConflict } from '../database/retry';
import { normaliseDocument } from '../sellers/document';
import { EventType, recordEvents } from '../webhooks/outbox';
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
 * order, and records its outbox event, all in one short database transaction.
 */
@Injectable()
export class VirtualAccountsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(LedgerRepository) private readonly ledger: LedgerRepository,
  ) {}

  /** Opens the virtual account of a new sub-account, in the caller's transaction. */
  open(manager: EntityManager, subaccount: { id: string; sellerId: string; name: string }): Promise<void> {
    return this.ledger.openVirtualAccount(manager, subaccount);
  }

  async list(sellerId: string, page: PageRequest): Promise<Page<VirtualAccountResponseDto>> {
    return toPage(await this.ledger.listVirtualAccounts(sellerId, page), page, (a) => a.seq, VirtualAccountResponseDto.of);
  }

  async get(sellerId: string, id: string): Promise<VirtualAccountResponseDto> {
    return VirtualAccountResponseDto.of(await this.find(sellerId, id));
  }

  async postings(sellerId: string, id: string, query: PostingsQueryDto, page: PageRequest): Promise<Page<PostingResponseDto>> {
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
    const counterparty = { payee: { name: input.payee.name, document: input.payee.document ?? null }, barcode: input.barcode };
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
    const { virtual_account: target, pix_key: pixKey, bank_account: bank } = input.destination;
    if ([target, pixKey, bank].filter((d) => d !== undefined).length !== 1) {
      throw ValidationError.of('destination', 'must have exactly one of virtual_account, pix_key, bank_account');
    }
    let lines: NewLine[];
    if (target !== undefined) {
      if (target.toLowerCase() === id.toLowerCase()) {
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
   * One movement in one short transaction: the virtual accounts' balances move in ascending id
   * order (the acting account only if it belongs to the seller), then the journal entry with
   * its lines and the outbox events are written. A refused movement writes nothing.
   */
  private post(movement: Movement): Promise<PostingResponseDto> {
    return retryOnConflict(() =>
      this.dataSource.transaction(async (manager) => {
        const virtual = movement.lines.filter((l) => l.type !== 'external').sort((a, b) => (a.accountId < b.accountId ? -1 : 1));
        const moved = new Map<string, { balance: Cents; line: string; sellerId: string }>();
        for (const line of virtual) {
          const acting = line.accountId === movement.accountId;
          const result = await this.ledger.moveBalance(manager, line.accountId, line.amount, acting ? movement.sellerId : undefined);
          if (!result) throw await this.refusal(movement, line);
          moved.set(line.accountId, result);
        }
        const rows = await this.ledger.insertEntry(
          manager,
          { kind: movement.kind, sellerId: movement.sellerId, description: movement.description, externalReference: movement.externalReference },
          movement.lines.map((line) => ({
            ...line,
            accountLine: moved.get(line.accountId)?.line ?? null,
            balanceAfter: moved.get(line.accountId)?.balance ?? null,
          })),
        );
        await recordEvents(
          manager,
          rows
            .filter((row) => row.type !== 'external')
            .map((row) => ({
              type: movement.event,
              sellerId: moved.get(row.accountId)!.sellerId,
              data: { virtual_account: row.accountId, journal_entry: row.entryId, posting: PostingResponseDto.of(row) },
            })),
        );
        return PostingResponseDto.of(rows.find((r) => r.accountId === movement.accountId)!);
      }),
    );
  }

  /** Why a balance did not move: the acting account is not the seller's, it lacks funds, or the destination does not exist. */
  private async refusal(movement: Movement, line: NewLine): Promise<Error> {
    if (line.accountId !== movement.accountId) {
      return new BadRequestError('destination_not_found', 'The destination virtual account does not exist.');
    }
    if (!(await this.ledger.findVirtualAccount(movement.sellerId, line.accountId))) return notFound();
    return new BadRequestError('insufficient_funds', 'The virtual account does not hold enough funds.');
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
