import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { wholeOrSelected } from '../../items/field-dto';
import { type Page, PageDto } from '../../items/page';
import { CompanyDto, SelectedCompanyDto } from './company.dto';

/** A page of `GET /v1/companies`. */
@ApiExtraModels(CompanyDto, SelectedCompanyDto)
export class CompanyPageDto extends PageDto implements Page<CompanyDto | SelectedCompanyDto> {
  @ApiProperty({
    type: 'array',
    items: wholeOrSelected(CompanyDto, SelectedCompanyDto),
    description:
      'The companies of the page: `intentScore` descending, ties by `id` ascending. With `fields`, each with only those fields (and its `id`).',
  })
  data!: (CompanyDto | SelectedCompanyDto)[];
}
