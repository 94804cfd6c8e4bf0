import {
  ApiExtraModels,
  ApiProperty,
  type ApiPropertyOptions,
  getSchemaPath,
} from '@nestjs/swagger';
import { ChangePageDto, ItemDeletedDto, ItemUpsertedDto } from '../../changes/dto/change.dto';
import { wholeOrSelected } from '../../items/field-dto';
import { CompanyDto, SelectedCompanyDto } from './company.dto';

@ApiExtraModels(CompanyDto, SelectedCompanyDto)
export class CompanyUpsertedDto extends ItemUpsertedDto {
  @ApiProperty({
    ...(wholeOrSelected(CompanyDto, SelectedCompanyDto) as ApiPropertyOptions),
    description:
      'The company as it is now, contacts included. With `fields`, only those fields (and its `id`).',
  })
  company!: CompanyDto | SelectedCompanyDto;
}

/** A page of `GET /v1/companies/changes`. */
@ApiExtraModels(CompanyUpsertedDto, ItemDeletedDto)
export class CompanyChangePageDto extends ChangePageDto {
  @ApiProperty({
    type: 'array',
    items: {
      oneOf: [{ $ref: getSchemaPath(CompanyUpsertedDto) }, { $ref: getSchemaPath(ItemDeletedDto) }],
      discriminator: {
        propertyName: 'op',
        mapping: {
          upsert: getSchemaPath(CompanyUpsertedDto),
          delete: getSchemaPath(ItemDeletedDto),
        },
      },
    },
    description:
      'Changes in feed order, each company at most once: at its latest change, as it is now.',
  })
  data!: (CompanyUpsertedDto | ItemDeletedDto)[];
}
