import {
  ApiExtraModels,
  ApiProperty,
  type ApiPropertyOptions,
  getSchemaPath,
} from '@nestjs/swagger';
import { ChangePageDto, ItemDeletedDto, ItemUpsertedDto } from '../../changes/dto/change.dto';
import { wholeOrSelected } from '../../items/field-dto';
import { LeadDto, SelectedLeadDto } from './lead.dto';

@ApiExtraModels(LeadDto, SelectedLeadDto)
export class LeadUpsertedDto extends ItemUpsertedDto {
  @ApiProperty({
    ...(wholeOrSelected(LeadDto, SelectedLeadDto) as ApiPropertyOptions),
    description:
      "The lead as it is now, with its company's current name. With `fields`, only those fields (and its `id`).",
  })
  lead!: LeadDto | SelectedLeadDto;
}

/** A page of `GET /v1/leads/changes`. */
@ApiExtraModels(LeadUpsertedDto, ItemDeletedDto)
export class LeadChangePageDto extends ChangePageDto {
  @ApiProperty({
    type: 'array',
    items: {
      oneOf: [{ $ref: getSchemaPath(LeadUpsertedDto) }, { $ref: getSchemaPath(ItemDeletedDto) }],
      discriminator: {
        propertyName: 'op',
        mapping: {
          upsert: getSchemaPath(LeadUpsertedDto),
          delete: getSchemaPath(ItemDeletedDto),
        },
      },
    },
    description:
      'Changes in feed order, each lead at most once: at its latest change, as it is now.',
  })
  data!: (LeadUpsertedDto | ItemDeletedDto)[];
}
