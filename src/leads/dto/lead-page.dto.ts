import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { wholeOrSelected } from '../../items/field-dto';
import { type Page, PageDto } from '../../items/page';
import { LeadDto, SelectedLeadDto } from './lead.dto';

/** A page of `GET /v1/leads`. */
@ApiExtraModels(LeadDto, SelectedLeadDto)
export class LeadPageDto extends PageDto implements Page<LeadDto | SelectedLeadDto> {
  @ApiProperty({
    type: 'array',
    items: wholeOrSelected(LeadDto, SelectedLeadDto),
    description:
      'The leads of the page: `intentScore` descending, ties by `id` ascending. With `fields`, each with only those fields (and its `id`).',
  })
  data!: (LeadDto | SelectedLeadDto)[];
}
