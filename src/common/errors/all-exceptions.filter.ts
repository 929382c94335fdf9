import { ArgumentsHost, Catch, ExceptionFilter, Inject, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpMetrics } from '../../metrics/http-metrics';
import { toErrorResponse } from './error-response';

/** The one global filter: every exception becomes the error body of API.md section 1. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(@Inject(HttpMetrics) private readonly metrics: HttpMetrics) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const response = toErrorResponse(exception, String(request.id));
    this.metrics.errorAnswered(response.body.code);
    if (response.unexpected) {
      this.logger.error(
        { err: exception, request_id: request.id, route: request.routeOptions?.url },
        'Unhandled error',
      );
    } else if (response.status === 503) {
      this.logger.warn({ err: exception, request_id: request.id }, 'Service unavailable');
    }
    if (reply.sent) return;
    reply.status(response.status).headers(response.headers).send(response.body);
  }
}
