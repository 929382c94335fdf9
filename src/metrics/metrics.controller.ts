import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/access.decorators';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import type { FastifyReply } from 'fastify';
import { HttpMetrics } from './http-metrics';

@ApiTags('operations')
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(HttpMetrics) private readonly metrics: HttpMetrics) {}

  @Get()
  @ApiOperation({
    summary:
      'Prometheus metrics: requests by route and status, transactions, declines, voids, ledger postings, ' +
      'idempotency conflicts, outbox backlog, job queues, database pool',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format.', schema: { type: 'string' } })
  @ApiErrorResponses(405)
  @Header('cache-control', 'no-store')
  async render(@Res() reply: FastifyReply): Promise<void> {
    reply.header('content-type', this.metrics.contentType).send(await this.metrics.render());
  }
}
