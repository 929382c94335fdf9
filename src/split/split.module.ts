import { Module } from '@nestjs/common';
import { SplitService } from './split.service';

/** The rate/split resolution engine (API.md section 7). */
@Module({ providers: [SplitService], exports: [SplitService] })
export class SplitModule {}
