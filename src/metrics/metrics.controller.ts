import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/access.decorators';
import type { FastifyReply } from 'fastify';
import { HttpMetrics } from './http-metrics';

@ApiTags('operations')
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: HttpMetrics) {}

  @Get()
  @ApiOperation({
    summary:
      'Prometheus metrics: requests by route and status, transactions, declines, voids, ledger postings, ' +
      'idempotency conflicts, outbox backlog, job queues, database pool',
    description:
      'Prometheus text exposition of the process: HTTP request counts and latency by method, route and status; ' +
      'transactions by payment type and status, declines by reason, voids, ledger postings by kind, idempotency ' +
      "conflicts by code, the outbox backlog (pending count, oldest age), job queue depth per queue and state, the database pool (in use, idle, waiting), and the runtime's own metrics.",
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format.', schema: { type: 'string' } })
  @Header('cache-control', 'no-store')
  async render(@Res() reply: FastifyReply): Promise<void> {
    reply.header('content-type', this.metrics.contentType).send(await this.metrics.render());
  }
}
