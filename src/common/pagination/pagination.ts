import { Type as ClassType } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, isUUID, Max, MaxLength, Min } from 'class-validator';
import { createHash } from 'node:crypto';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { currentRequest } from '../context/request-context';
import { BadRequestError } from '../errors/api-error';

/**
 * Keyset (cursor) pagination of API.md section 1. Rows are ordered by a per-table,
 * strictly increasing `seq` (an identity column with an index), so a page is one index
 * range scan whatever the table's size: no OFFSET, no COUNT. The cursor is opaque to
 * clients: base64url of the last row's position, the direction it was read in and the list
 * (route and record) that issued it, so that a cursor of another list is refused rather than
 * read as a position in this one.
 */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const MAX_POSITION = 9_223_372_036_854_775_807n; // PostgreSQL bigint

export type Ordering = 'created_at' | '-created_at';

export class PageQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: DEFAULT_PAGE_SIZE,
    description: 'Page size.',
  })
  @IsOptional()
  // Digits only: Number() would also read "1e1", "0x10" or " 10" as a page size.
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : value,
  )
  @IsInt({ message: 'must be an integer between 1 and 100' })
  @Min(1, { message: 'must be an integer between 1 and 100' })
  @Max(MAX_PAGE_SIZE, { message: 'must be an integer between 1 and 100' })
  limit?: number;

  @ApiPropertyOptional({ description: 'The `next_cursor` of the previous page.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;

  @ApiPropertyOptional({
    enum: ['-created_at', 'created_at'],
    default: '-created_at',
    description: 'Newest first (default) or oldest first.',
  })
  @IsOptional()
  @IsIn(['created_at', '-created_at'], { message: 'must be "created_at" or "-created_at"' })
  ordering?: Ordering;
}

export interface PageRequest {
  limit: number;
  descending: boolean;
  /** Position after which the page starts (exclusive), or null for the first page. */
  after: string | null;
  /** The list read (a tag of the request's route), written into the next page's cursor; none outside a request. */
  list?: string;
}

export interface Page<T> {
  results: T[];
  next_cursor: string | null;
}

interface CursorPayload {
  /** Position: the last row's seq, as a decimal string. */
  p: string;
  /** Direction: "d" newest first, "a" oldest first. */
  d: 'd' | 'a';
  /** The list that issued it (see listTag); absent from cursors issued before lists were told apart. */
  l?: string;
}

export function toPageRequest(query: PageQueryDto): PageRequest {
  const descending = (query.ordering ?? '-created_at') === '-created_at';
  const list = listTag();
  return {
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    descending,
    after: query.cursor === undefined ? null : decodeCursor(query.cursor, descending, list),
    list,
  };
}

/**
 * The list a request reads: a short hash of its route template and path parameters (UUIDs in
 * one case), so that a cursor of one list, or of the same list of another record (an endpoint's
 * deliveries, an account's postings), is not taken by another.
 */
function listTag(): string | undefined {
  const request = currentRequest()?.request;
  const route = request?.routeOptions?.url;
  if (!route) return undefined;
  const params = Object.entries((request.params ?? {}) as Record<string, string>)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${isUUID(value) ? value.toLowerCase() : value}`);
  return createHash('sha256')
    .update([route, ...params].join('\n'))
    .digest('base64url')
    .slice(0, 8);
}

export function encodeCursor(position: string, descending: boolean, list?: string): string {
  const payload: CursorPayload = { p: position, d: descending ? 'd' : 'a', ...(list ? { l: list } : {}) };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

export function decodeCursor(cursor: string, descending: boolean, list?: string): string {
  let payload: Partial<CursorPayload> | null = null;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorPayload>;
  } catch {
    // not JSON: refused below like any other malformed cursor
  }
  if (
    typeof payload?.p !== 'string' ||
    !/^\d{1,19}$/.test(payload.p) ||
    BigInt(payload.p) > MAX_POSITION ||
    (payload.d !== 'd' && payload.d !== 'a') ||
    (payload.l !== undefined && typeof payload.l !== 'string')
  ) {
    throw invalidCursor();
  }
  if (payload.l !== undefined && list !== undefined && payload.l !== list) {
    throw new BadRequestError(
      'invalid_cursor',
      'The cursor was issued by another list; use the next_cursor of this one.',
    );
  }
  if ((payload.d === 'd') !== descending) {
    throw new BadRequestError('invalid_cursor', 'The cursor was issued for the other ordering.');
  }
  return payload.p;
}

/**
 * Restricts a query to one page: the keyset condition (when continuing), the order and a
 * limit of one row more than the page, to learn whether a next page exists.
 */
export function applyKeyset<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  column: string,
  page: PageRequest,
): SelectQueryBuilder<T> {
  if (page.after !== null) {
    query.andWhere(`${column} ${page.descending ? '<' : '>'} :keysetAfter`, { keysetAfter: page.after });
  }
  return query.orderBy(column, page.descending ? 'DESC' : 'ASC').limit(page.limit + 1);
}

/**
 * applyKeyset for a list ordered by a column of its own (`t.created_at`) and then by the cursor's
 * position column (`t.seq`), which breaks its ties: the page goes on after the cursor's row in
 * that order. `cursorRow` is a query answering both columns of the row at position `:keysetAfter`.
 */
export function applyKeysetAfterRow<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  [column, position]: [string, string],
  cursorRow: string,
  page: PageRequest,
): SelectQueryBuilder<T> {
  if (page.after !== null) {
    query.andWhere(`(${column}, ${position}) ${page.descending ? '<' : '>'} (${cursorRow})`, {
      keysetAfter: page.after,
    });
  }
  const direction = page.descending ? 'DESC' : 'ASC';
  return query
    .orderBy(column, direction)
    .addOrderBy(position, direction)
    .limit(page.limit + 1);
}

/**
 * The same for hand-written SQL: the keyset condition (its value appended to `params`, or
 * null on the first page) and the ORDER BY / LIMIT clause.
 */
export function keysetSql(
  column: string,
  page: PageRequest,
  params: unknown[],
): { condition: string | null; orderAndLimit: string } {
  const condition = page.after === null ? null : `${column} ${page.descending ? '<' : '>'} $${params.push(page.after)}`;
  return { condition, orderAndLimit: `ORDER BY ${column} ${page.descending ? 'DESC' : 'ASC'} LIMIT ${page.limit + 1}` };
}

/**
 * keysetSql for a list ordered by a column of its own and then by the cursor's position column
 * (see applyKeysetAfterRow). `cursorRow` makes the query answering both columns of the row at
 * the position, given the position's parameter (`$n`).
 */
export function keysetSqlAfterRow(
  [column, position]: [string, string],
  cursorRow: (positionParam: string) => string,
  page: PageRequest,
  params: unknown[],
): { condition: string | null; orderAndLimit: string } {
  const direction = page.descending ? 'DESC' : 'ASC';
  const condition =
    page.after === null
      ? null
      : `(${column}, ${position}) ${page.descending ? '<' : '>'} (${cursorRow(`$${params.push(page.after)}`)})`;
  return {
    condition,
    orderAndLimit: `ORDER BY ${column} ${direction}, ${position} ${direction} LIMIT ${page.limit + 1}`,
  };
}

/**
 * The query answering `created_at` and `seq` of the row at a cursor's position (`position`: its
 * placeholder) among the rows of one seller (`seller`: its placeholder), for the keysets above: a
 * cursor naming another seller's row finds nothing and gives nothing away. The row is found by
 * its unique `seq` alone, then checked; OFFSET 0 keeps PostgreSQL from folding the seller check
 * into the lookup, whose generic plan could otherwise walk an index of all the seller's rows.
 */
export function sellerCursorRow(table: string, position: string, seller: string): string {
  return `SELECT c.created_at, c.seq FROM (SELECT created_at, seq, seller_id FROM ${table} WHERE seq = ${position} OFFSET 0) c
    WHERE c.seller_id = ${seller}`;
}

/** Cuts the extra row off and makes the cursor of the next page from the last row kept. */
export function toPage<R, T>(
  rows: R[],
  page: PageRequest,
  positionOf: (row: R) => string,
  map: (row: R) => T,
): Page<T> {
  const hasMore = rows.length > page.limit;
  const kept = hasMore ? rows.slice(0, page.limit) : rows;
  return {
    results: kept.map(map),
    next_cursor: hasMore ? encodeCursor(positionOf(kept[kept.length - 1]), page.descending, page.list) : null,
  };
}

function invalidCursor(): BadRequestError {
  return new BadRequestError('invalid_cursor', 'The cursor is not valid; use the next_cursor of a previous page.');
}

/** The OpenAPI schema of a page of `item`: `{results: [item], next_cursor}`. */
export function PageOf<T>(item: ClassType<T>): ClassType<Page<T>> {
  class PageDto {
    @ApiProperty({ type: [item] })
    results: T[];

    @ApiProperty({
      type: 'string',
      nullable: true,
      description: 'Pass as `cursor` for the next page; null on the last one.',
    })
    next_cursor: string | null;
  }
  Object.defineProperty(PageDto, 'name', { value: `${item.name.replace(/(Response)?Dto$/, '')}PageDto` });
  return PageDto;
}
