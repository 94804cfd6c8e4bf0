import { Global, Module } from '@nestjs/common';
import { PrismaService } from './prisma.service';

/** For the admin tool's modules (needs DatabaseModule, whose pool it runs on). */
@Global()
@Module({
  providers: [PrismaService],
  exports: [PrismaService],
})
export class PrismaModule {}
