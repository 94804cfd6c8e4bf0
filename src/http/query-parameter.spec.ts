import { BadRequestException } from '@nestjs/common';
import { DateTimeParameter, ListQueryDto } from './list-query.dto';
import { givenOnce, QueryParameter, RefusedValue } from './query-parameter';
import { parseQueryString } from './query-string';
import { StrictValidationPipe, VALIDATION_OPTIONS } from './strict-validation.pipe';

// A parameter declared as the visits' would be: a list of paths, each refused on its own.
class PathsQueryDto extends ListQueryDto {
  @QueryParameter({
    parse(raw) {
      const value = givenOnce('page', raw);
      if (value instanceof RefusedValue) return value;
      const paths = value.split(',');
      const wrong = paths.filter((path) => !path.startsWith('/'));
      return wrong.length === 0
        ? paths
        : new RefusedValue(...wrong.map((path) => `page has an invalid path "${path}"`));
    },
    apiProperty: { type: 'string' },
  })
  page?: string[];

  @DateTimeParameter({ description: 'Before this instant.', example: '2026-03-01T00:00:00Z' })
  until?: Date;
}

const pipe = new StrictValidationPipe(VALIDATION_OPTIONS);
const validate = (query: string) =>
  pipe.transform(parseQueryString(query), { type: 'query', metatype: PathsQueryDto });

async function refusal(query: string): Promise<unknown> {
  const error: unknown = await validate(query).then(
    () => undefined,
    (refused: unknown) => refused,
  );
  expect(error).toBeInstanceOf(BadRequestException);
  return (error as BadRequestException).getResponse();
}

describe('QueryParameter', () => {
  it('puts the parsed value in its place, and nothing when absent', async () => {
    await expect(validate('page=/a,/b&until=2026-01-01')).resolves.toMatchObject({
      page: ['/a', '/b'],
      until: new Date('2026-01-01T00:00:00Z'),
    });
    expect(((await validate('limit=5')) as PathsQueryDto).page).toBeUndefined();
  });

  it('refuses with one entry per message of the refused value', async () => {
    await expect(refusal('page=a,/b,c')).resolves.toMatchObject({
      message: ['page has an invalid path "a"', 'page has an invalid path "c"'],
    });
    await expect(refusal('page=/a&page=/b')).resolves.toMatchObject({
      message: ['page must be given only once'],
    });
  });
});

describe('DateTimeParameter', () => {
  it.each([
    ['since=yesterday', 'since must be an ISO 8601 date-time'],
    ['since=2026-01-01&since=2026-01-02', 'since must be given only once'],
    ['until=2026-02-30', 'until must be an ISO 8601 date-time'],
    ['until=2026-01-01&until=2026-01-01', 'until must be given only once'],
  ])('refuses ?%s: %s', async (query, message) => {
    await expect(refusal(query)).resolves.toMatchObject({ message: [message] });
  });
});
