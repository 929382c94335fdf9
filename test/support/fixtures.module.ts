import { Body, Controller, HttpCode, Module, OnModuleInit, Post } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { DataSource } from 'typeorm';
import { Public } from '../../src/auth/access.decorators';
import { ConflictError } from '../../src/common/errors/api-error';
import { Idempotent } from '../../src/common/idempotency/idempotent.decorator';
import { requestTransaction } from '../../src/common/idempotency/request-transaction';
import { MoneyField } from '../../src/common/money/money.decorators';
import { checkMoney } from '../../src/common/money/money';
import { recordEvent } from '../../src/webhooks/outbox';

/**
 * Routes that exist only in tests, to exercise the shared HTTP machinery (validation,
 * errors, idempotency, outbox) before the business modules use it.
 */
class CustomerDto {
  @IsString()
  name: string;
}

class EchoDto {
  @IsString()
  name: string;

  @MoneyField()
  amount: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => CustomerDto)
  customer?: CustomerDto;
}

class RecordDto {
  @MoneyField()
  amount: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(5000)
  delay_ms?: number;

  @IsOptional()
  @IsBoolean()
  reject?: boolean;
}

class OutboxDto {
  @IsBoolean()
  fail: boolean;
}

@Public()
@Controller('test-fixtures')
class FixturesController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  @Post('echo')
  echo(@Body() body: EchoDto) {
    return body;
  }

  @Post('boom')
  boom(): never {
    throw new Error('database password is hunter2 at /secret/path.ts:12');
  }

  @Post('records')
  @HttpCode(201)
  @Idempotent()
  async create(@Body() body: RecordDto) {
    if (body.delay_ms) await new Promise((r) => setTimeout(r, body.delay_ms));
    if (body.reject) throw new ConflictError('rejected', 'Rejected on purpose.');
    const cents = checkMoney(body.amount);
    const [row] = await this.dataSource.query(
      `INSERT INTO test_records (amount) VALUES ($1) RETURNING id, (SELECT count(*) + 1 FROM test_records)::int AS count`,
      [cents.ok ? cents.value : 0],
    );
    // Keys in another order than jsonb's (shorter first): a replay must keep the order sent.
    return { count: row.count, id: row.id };
  }

  /** The same, written with requestTransaction: the key's answer commits with the row. */
  @Post('tx-records')
  @HttpCode(201)
  @Idempotent()
  async createInTransaction(@Body() body: RecordDto) {
    const cents = checkMoney(body.amount);
    return requestTransaction(this.dataSource, async (manager) => {
      const [row] = await manager.query(`INSERT INTO test_records (amount) VALUES ($1) RETURNING id`, [
        cents.ok ? cents.value : 0,
      ]);
      if (body.delay_ms) await new Promise((r) => setTimeout(r, body.delay_ms));
      if (body.reject) throw new ConflictError('rejected', 'Rejected on purpose.');
      return { id: row.id as string };
    });
  }

  @Post('outbox')
  @HttpCode(201)
  async outbox(@Body() body: OutboxDto) {
    return this.dataSource.transaction(async (manager) => {
      const [record] = await manager.query(`INSERT INTO test_records (amount) VALUES (1) RETURNING id`);
      // Deferred: sent with the commit (see PipelinedClient).
      await recordEvent(manager, 'webhook.test', null, { hello: 'world', record: record.id });
      if (body.fail) throw new Error('failure after the event was recorded');
      return { record: record.id as string };
    });
  }
}

/** A route that forgot to declare its access: the global guard must refuse it. */
@Controller('test-fixtures-undeclared')
class UndeclaredController {
  @Post()
  @HttpCode(201)
  open() {
    return { reached: true };
  }
}

@Module({ controllers: [FixturesController, UndeclaredController] })
export class FixturesModule implements OnModuleInit {
  constructor(private readonly dataSource: DataSource) {}

  async onModuleInit() {
    await this.dataSource.query(
      `CREATE TABLE IF NOT EXISTS test_records (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), amount bigint NOT NULL)`,
    );
  }
}
