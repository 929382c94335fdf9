import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';
import { PageQueryDto } from '../../common/pagination/pagination';
import { IsDateTime } from '../../common/validation/date-time.decorator';
import { IsOmittable } from '../../common/validation/optional.decorator';
import { EVENT_TYPES } from '../outbox';
import type { AttemptRow, DeliveryRow, EndpointRow, EventRow } from '../webhooks.repository';

/** Each item of a list of event types is at most this long (longer than any type): refused without being echoed back. */
const EventTypeItems = () =>
  MaxLength(100, { each: true, message: 'must list event types (see GET /integrations/webhooks/event_types/)' });

const EVENTS_DESCRIPTION = `Event types to receive, or \`["*"]\` for all. Known types: ${EVENT_TYPES.join(', ')}.`;

export class CreateWebhookDto {
  @ApiProperty({
    example: 'https://example.com/webhooks/payments',
    maxLength: 2048,
    description:
      'https only, written as called (scheme://host, no spaces, control characters or backslashes, no fragment, port 1-65535); ' +
      'no credentials; hosts that are or resolve to private, loopback, link-local, CGNAT, multicast or ' +
      'unique local addresses are refused (400 `webhook_url_not_allowed`) unless WEBHOOKS_ALLOW_PRIVATE_URLS=true.',
  })
  @IsString()
  url: string;

  @ApiProperty({
    type: [String],
    example: ['transaction.approved', 'transaction.voided'],
    description: EVENTS_DESCRIPTION,
  })
  @IsArray()
  @ArrayNotEmpty({ message: 'must list at least one event type (or "*")' })
  @ArrayMaxSize(EVENT_TYPES.length + 1)
  @IsString({ each: true })
  @EventTypeItems()
  events: string[];

  @ApiPropertyOptional({ default: '', maxLength: 1000 })
  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @ApiPropertyOptional({ default: true })
  @IsOmittable()
  @IsBoolean()
  active?: boolean;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ maxLength: 2048, description: 'Checked like on creation.' })
  @IsOmittable()
  @IsString()
  url?: string;

  @ApiPropertyOptional({ type: [String], description: EVENTS_DESCRIPTION })
  @IsOmittable()
  @IsArray()
  @ArrayNotEmpty({ message: 'must list at least one event type (or "*")' })
  @ArrayMaxSize(EVENT_TYPES.length + 1)
  @IsString({ each: true })
  @EventTypeItems()
  events?: string[];

  @ApiPropertyOptional({ maxLength: 1000 })
  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @ApiPropertyOptional({ description: 'Reactivating a disabled endpoint clears its failure streak.' })
  @IsOmittable()
  @IsBoolean()
  active?: boolean;
}

export class ReplayWebhookDto {
  @ApiProperty({ format: 'date-time', description: 'Events created at or after this instant.' })
  @IsDateTime()
  since: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Events created before this instant (default: now).' })
  @IsOmittable()
  @IsDateTime()
  until?: string;

  @ApiPropertyOptional({ type: [String], description: 'Only these types (default: every type the endpoint receives).' })
  @IsOmittable()
  @IsArray()
  @ArrayNotEmpty({ message: 'must list at least one event type' })
  @ArrayMaxSize(EVENT_TYPES.length)
  @IsString({ each: true })
  @EventTypeItems()
  event_types?: string[];
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export class DeliveryListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: (typeof DELIVERY_STATUSES)[number];

  @ApiPropertyOptional({ enum: EVENT_TYPES })
  @IsOptional()
  @IsIn(EVENT_TYPES, { message: 'must be an event type (see GET /integrations/webhooks/event_types/)' })
  event_type?: string;
}

export class EventListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: EVENT_TYPES })
  @IsOptional()
  @IsIn(EVENT_TYPES, { message: 'must be an event type (see GET /integrations/webhooks/event_types/)' })
  type?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Events created at or after this instant.' })
  @IsOptional()
  @IsDateTime()
  created_after?: string;
}

export class WebhookResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: [String] }) events: string[];
  @ApiProperty() description: string;
  @ApiProperty() active: boolean;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Why the service disabled the endpoint (410 Gone, or 5 days of failures); null otherwise.',
  })
  disabled_reason: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static of(row: EndpointRow): WebhookResponseDto {
    return {
      id: row.id,
      seller: row.seller_id,
      url: row.url,
      events: row.events,
      description: row.description,
      active: row.active,
      disabled_reason: row.disabled_reason,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }
}

export class CreatedWebhookResponseDto extends WebhookResponseDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The signing secret. Shown only in this response (and on rotate_secret): store it now.',
  })
  secret: string;
}

export class WebhookSecretResponseDto {
  @ApiProperty({ format: 'uuid', description: 'The webhook endpoint whose secret this is.' })
  id: string;
  @ApiProperty({ description: 'The new signing secret; the previous one keeps signing too for 24 hours.' })
  secret: string;
}

class DeliveryEventDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() type: string;
}

export class DeliveryResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: DeliveryEventDto }) event: DeliveryEventDto;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: string;
  @ApiProperty({ description: 'Attempts made so far.' }) attempts: number;
  @ApiProperty({ format: 'date-time', type: 'string', nullable: true }) last_attempt_at: string | null;
  @ApiProperty({ format: 'date-time', type: 'string', nullable: true, description: 'Null unless pending.' })
  next_attempt_at: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) last_response_status: number | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'First 1 KiB of the last answer.' })
  last_response_body: string | null;
  @ApiProperty({ type: 'string', nullable: true }) last_error: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static of(row: DeliveryRow): DeliveryResponseDto {
    return {
      id: row.id,
      event: { id: row.event_id, type: row.event_type },
      status: row.status,
      attempts: row.attempts,
      last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
      next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
      last_response_status: row.last_response_status,
      last_response_body: row.last_response_body,
      last_error: row.last_error,
      created_at: row.created_at.toISOString(),
    };
  }
}

export class AttemptResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ description: '1 for the first attempt.' }) number: number;
  @ApiProperty({ format: 'date-time' }) started_at: string;
  @ApiProperty() duration_ms: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Null when no answer came.' })
  response_status: number | null;
  @ApiProperty({ type: 'string', nullable: true }) error: string | null;

  static of(row: AttemptRow): AttemptResponseDto {
    return {
      id: row.id,
      number: row.number,
      started_at: row.started_at.toISOString(),
      duration_ms: row.duration_ms,
      response_status: row.response_status,
      error: row.error,
    };
  }
}

export class ReplayResponseDto {
  @ApiProperty({ description: 'Deliveries queued.' }) queued: number;
}

export class EventTypeDto {
  @ApiProperty() type: string;
  @ApiProperty() description: string;
}

export class EventResponseDto {
  @ApiProperty({ format: 'uuid', description: 'Also the `webhook-id` of its deliveries.' }) id: string;
  @ApiProperty() type: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The record as the API returned it when the event happened.',
  })
  data: object;

  static of(row: EventRow): EventResponseDto {
    return { id: row.id, type: row.type, created_at: row.created_at, data: row.data };
  }
}
