import { ApiProperty } from '@nestjs/swagger';
import { formatMoney, formatPercentage } from '../../common/money/money';
import type { Resolution } from '../../split/resolve';

/** The fee of a payment (API.md section 7): the rate-plan cell and the amount it comes to. */
export class FeeViewDto {
  @ApiProperty({ example: '2.99' }) percentage: string;
  @ApiProperty({ example: '0.50' }) fixed: string;
  @ApiProperty({ example: '3.49' }) amount: string;

  static of(fee: Resolution['fee']): FeeViewDto {
    return { percentage: formatPercentage(fee.units), fixed: formatMoney(fee.fixed), amount: formatMoney(fee.amount) };
  }
}

export class ShareViewDto {
  @ApiProperty({ example: 'Master' }) label: string;
  @ApiProperty({ enum: ['developer', 'participant'], example: 'participant' }) role: 'developer' | 'participant';
  @ApiProperty({ example: '1' }) percentage: string;
  @ApiProperty({ example: '1.00' }) amount: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: 'string' }) recipient: string | null;

  static of(share: Resolution['shares'][number]): ShareViewDto {
    return {
      label: share.label,
      role: share.role,
      percentage: formatPercentage(share.units),
      amount: formatMoney(share.amount),
      recipient: share.recipient,
    };
  }
}

/** How a payment is shared: each label's share, the totals and what is left to the seller. */
export class SplitViewDto {
  @ApiProperty({ type: [ShareViewDto] }) shares: ShareViewDto[];
  @ApiProperty({ example: '0.50' }) developer_amount: string;
  @ApiProperty({ example: '1.75' }) participants_amount: string;
  @ApiProperty({ example: '94.26' }) seller_net: string;

  static of(resolution: Omit<Resolution, 'fee'>): SplitViewDto {
    return {
      shares: resolution.shares.map(ShareViewDto.of),
      developer_amount: formatMoney(resolution.developerAmount),
      participants_amount: formatMoney(resolution.participantsAmount),
      seller_net: formatMoney(resolution.sellerNet),
    };
  }
}

/** The whole resolution as the API shows it: money and percentages as decimal strings. */
export class ResolutionResponseDto extends SplitViewDto {
  @ApiProperty({ type: FeeViewDto }) fee: FeeViewDto;

  static override of(resolution: Resolution): ResolutionResponseDto {
    return { fee: FeeViewDto.of(resolution.fee), ...SplitViewDto.of(resolution) };
  }
}
