import { ApiProperty } from '@nestjs/swagger';
import { type Page, PageDto } from '../../items/page';
import { LeadDto } from './lead.dto';

/** A page of `GET /v1/leads`. */
export class LeadPageDto extends PageDto implements Page<LeadDto> {
  @ApiProperty({
    type: [LeadDto],
    description: 'The leads of the page: `intentScore` descending, ties by `id` ascending.',
  })
  data!: LeadDto[];
}
