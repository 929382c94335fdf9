import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SplitModule } from '../split/split.module';
import { RatePlan } from './entities/rate-plan.entity';
import { SplitPlan } from './entities/split-plan.entity';
import { PlansController } from './plans.controller';
import { PlansRepository } from './plans.repository';
import { PlansService } from './plans.service';
import { RatePlansSyncService } from './rate-plans-sync.service';

@Module({
  imports: [TypeOrmModule.forFeature([RatePlan, SplitPlan]), SplitModule],
  controllers: [PlansController],
  providers: [PlansRepository, PlansService, RatePlansSyncService],
  exports: [PlansService, RatePlansSyncService],
})
export class PlansModule {}
