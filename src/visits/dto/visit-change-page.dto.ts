import {
  ApiExtraModels,
  ApiProperty,
  type ApiPropertyOptions,
  getSchemaPath,
} from '@nestjs/swagger';
import { ChangePageDto, ItemDeletedDto, ItemUpsertedDto } from '../../changes/dto/change.dto';
import { wholeOrSelected } from '../../items/field-dto';
import { SelectedVisitDto, VisitDto } from './visit.dto';

@ApiExtraModels(VisitDto, SelectedVisitDto)
export class VisitUpsertedDto extends ItemUpsertedDto {
  @ApiProperty({
    ...(wholeOrSelected(VisitDto, SelectedVisitDto) as ApiPropertyOptions),
    description:
      'The visit as it is now, pages included. With `fields`, only those fields (and its `id`).',
  })
  visit!: VisitDto | SelectedVisitDto;
}

/** A page of `GET /v1/visits/changes`. */
@ApiExtraModels(VisitUpsertedDto, ItemDeletedDto)
export class VisitChangePageDto extends ChangePageDto {
  @ApiProperty({
    type: 'array',
    items: {
      oneOf: [{ $ref: getSchemaPath(VisitUpsertedDto) }, { $ref: getSchemaPath(ItemDeletedDto) }],
      discriminator: {
        propertyName: 'op',
        mapping: {
          upsert: getSchemaPath(VisitUpsertedDto),
          delete: getSchemaPath(ItemDeletedDto),
        },
      },
    },
    description:
      'Changes in feed order, each visit at most once: at its latest change, as it is now.',
  })
  data!: (VisitUpsertedDto | ItemDeletedDto)[];
}
