import { ChangeStreamQueryDto } from '../../changes/stream/change-stream-query.dto';
import { ChangesQueryDto } from '../../changes/changes-query.dto';
import { NoQueryDto } from '../../http/no-query.dto';
import { WithFields } from '../../items/fields-query';
import { LEAD_SELECTABLE } from '../lead.fields';

/** `fields` alone: the query of `GET /v1/leads/{id}`. */
export class LeadQueryDto extends WithFields(NoQueryDto, LEAD_SELECTABLE) {}

/** `cursor`, `limit` and `fields`: the query of `GET /v1/leads/changes`. */
export class LeadChangesQueryDto extends WithFields(ChangesQueryDto, LEAD_SELECTABLE) {}

/** `cursor` and `fields`: the query of `GET /v1/leads/changes/stream`. */
export class LeadChangeStreamQueryDto extends WithFields(ChangeStreamQueryDto, LEAD_SELECTABLE) {}
