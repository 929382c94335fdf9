import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../auth/access.decorators';
import { ServiceUnavailableError } from '../common/errors/api-error';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { HealthStatusDto } from './health-status.dto';

@ApiTags('operations')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  @Get('live')
  @ApiOperation({
    summary: 'Liveness: the process answers',
    description: "200 while the process runs; for the orchestrator's liveness probe (no database call).",
  })
  @ApiOkResponse({ type: HealthStatusDto })
  live(): HealthStatusDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness: the database answers',
    description: "200 when the database answers within 2 seconds, else 503: for the load balancer's readiness probe.",
  })
  @ApiOkResponse({ type: HealthStatusDto })
  @ApiErrorResponses(503)
  async ready(): Promise<HealthStatusDto> {
    try {
      await this.health.check([() => this.database.pingCheck('database', { timeout: 2000 })]);
    } catch {
      throw new ServiceUnavailableError('The database is not reachable.');
    }
    return { status: 'ok' };
  }
}
