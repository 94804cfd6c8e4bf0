import { ApiProperty } from '@nestjs/swagger';
import { type Page, PageDto } from '../../items/page';
import { CompanyDto } from './company.dto';

/** A page of `GET /v1/companies`. */
export class CompanyPageDto extends PageDto implements Page<CompanyDto> {
  @ApiProperty({
    type: [CompanyDto],
    description: 'The companies of the page: `intentScore` descending, ties by `id` ascending.',
  })
  data!: CompanyDto[];
}
