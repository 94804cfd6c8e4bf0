import { ChangeStreamQueryDto } from '../../changes/stream/change-stream-query.dto';
import { ChangesQueryDto } from '../../changes/changes-query.dto';
import { NoQueryDto } from '../../http/no-query.dto';
import { WithFields } from '../../items/fields-query';
import { COMPANY_SELECTABLE } from '../company.fields';

/** `fields` alone: the query of `GET /v1/companies/{id}`. */
export class CompanyQueryDto extends WithFields(NoQueryDto, COMPANY_SELECTABLE) {}

/** `cursor`, `limit` and `fields`: the query of `GET /v1/companies/changes`. */
export class CompanyChangesQueryDto extends WithFields(ChangesQueryDto, COMPANY_SELECTABLE) {}

/** `cursor` and `fields`: the query of `GET /v1/companies/changes/stream`. */
export class CompanyChangeStreamQueryDto extends WithFields(
  ChangeStreamQueryDto,
  COMPANY_SELECTABLE,
) {}
