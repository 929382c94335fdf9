import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { HttpMetrics } from './http-metrics';

@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(HttpMetrics) private readonly metrics: HttpMetrics) {}

  @Get()
  @Header('cache-control', 'no-store')
  async render(@Res() reply: FastifyReply): Promise<void> {
    reply.header('content-type', this.metrics.contentType).send(await this.metrics.render());
  }
}
