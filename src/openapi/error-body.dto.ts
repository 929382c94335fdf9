import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The error body of every 4xx and 5xx answer (API.md section 1). */
export class ErrorBodyDto {
  @ApiProperty({ example: 400, description: 'The HTTP status code, repeated.' })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request', description: 'The HTTP reason phrase.' })
  error: string;

  @ApiProperty({ example: 'validation_failed', description: 'Stable snake_case machine code.' })
  code: string;

  @ApiProperty({
    example: 'Invalid request: amount must be a decimal string.',
    description: 'One human-readable sentence.',
  })
  message: string;

  @ApiProperty({ example: '5f0c6f0e-7f7e-4c43-9a65-2f1d5f1f9b1e', description: 'Also in the X-Request-Id header.' })
  request_id: string;

  @ApiPropertyOptional({
    description: 'Validation failures only: field path to the list of its problems.',
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { 'split_details.credit3.Visa.Agente': ['must be a number between 0 and 100'] },
  })
  errors?: Record<string, string[]>;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'The record concerned, when the error names one (`idempotency_secret_not_replayable`).',
    example: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  })
  id?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'The ticket type short of seats (`sold_out`, `not_enough_tickets` when one is).',
    example: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  })
  ticket_type?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'The seats of that ticket type left (`sold_out`: 0, `not_enough_tickets`).',
    example: 5,
  })
  available?: number;
}
