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
    summary: 'Prometheus metrics: request counts and latency by route and status',
    description:
      "Prometheus text exposition of the process: HTTP request counts and latency by method, route and status, and the runtime's own metrics.",
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format.', schema: { type: 'string' } })
  @Header('cache-control', 'no-store')
  async render(@Res() reply: FastifyReply): Promise<void> {
    reply.header('content-type', this.metrics.contentType).send(await this.metrics.render());
  }
}
