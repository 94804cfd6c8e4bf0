import { BadRequestException } from '@nestjs/common';
import { CompanyListQueryDto } from '../companies/dto/company-list-query.dto';
import { LeadListQueryDto } from '../leads/dto/lead-list-query.dto';
import { StrictValidationPipe, VALIDATION_OPTIONS } from './strict-validation.pipe';
import { parseQueryString } from './query-string';

const asQuery = (metatype: unknown) => ({ type: 'query' as const, metatype: metatype as never });

describe('StrictValidationPipe: queries found valid are not validated again', () => {
  let pipe: StrictValidationPipe;
  let validations: jest.SpyInstance;

  beforeEach(() => {
    pipe = new StrictValidationPipe(VALIDATION_OPTIONS);
    // ValidationPipe's own step that runs class-validator.
    validations = jest.spyOn(pipe as never, 'validate');
  });

  it('answers a repeated query with the DTO made the first time, validated once', async () => {
    const query = () => parseQueryString('limit=20&offset=40&since=2026-01-01T00:00:00Z');
    const first = (await pipe.transform(query(), asQuery(CompanyListQueryDto))) as object;
    const second = (await pipe.transform(query(), asQuery(CompanyListQueryDto))) as object;
    expect(second).toBeInstanceOf(CompanyListQueryDto);
    expect(second).toBe(first);
    expect(second).toMatchObject({ limit: 20, offset: 40, since: new Date('2026-01-01Z') });
    expect(validations).toHaveBeenCalledTimes(1);
  });

  it('freezes the DTO it hands out again, and what it holds: no request changes the next one', async () => {
    const query = parseQueryString('limit=20&fields=id,name');
    const dto = (await pipe.transform(query, asQuery(CompanyListQueryDto))) as Record<
      string,
      unknown
    >;
    expect(Object.isFrozen(dto)).toBe(true);
    expect(dto.fields).toEqual(expect.any(Object));
    expect(Object.isFrozen(dto.fields)).toBe(true);
    expect(() => (dto.limit = 5)).toThrow(TypeError);
  });

  it('remembers a query per DTO: valid for the leads is still refused for the companies', async () => {
    const query = () => parseQueryString('status=new&limit=10');
    await expect(pipe.transform(query(), asQuery(LeadListQueryDto))).resolves.toBeInstanceOf(
      LeadListQueryDto,
    );
    await expect(pipe.transform(query(), asQuery(CompanyListQueryDto))).rejects.toThrow(
      BadRequestException,
    );
  });

  it('never remembers a refused query', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      await expect(
        pipe.transform(parseQueryString('limit=500'), asQuery(CompanyListQueryDto)),
      ).rejects.toThrow(BadRequestException);
    }
    expect(validations).toHaveBeenCalledTimes(3);
  });

  it('validates each time what is not a query string (the MCP tools pass numbers)', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(
        pipe.transform({ limit: '5', offset: 0 }, asQuery(CompanyListQueryDto)),
      ).resolves.toBeInstanceOf(CompanyListQueryDto);
    }
    expect(validations).toHaveBeenCalledTimes(2);
  });
});

describe('StrictValidationPipe: an unknown parameter', () => {
  const pipe = new StrictValidationPipe(VALIDATION_OPTIONS);
  const refusal = async (dto: unknown, query: string): Promise<unknown> => {
    try {
      await pipe.transform(parseQueryString(query), asQuery(dto));
    } catch (error) {
      return (error as BadRequestException).getResponse();
    }
    throw new Error(`${query} was accepted`);
  };

  it.each([
    [
      CompanyListQueryDto,
      'status=new',
      'property status should not exist: did you mean crmStatus?',
    ],
    [CompanyListQueryDto, 'limt=5', 'property limt should not exist: did you mean limit?'],
    [CompanyListQueryDto, 'Offset=5', 'property Offset should not exist: did you mean offset?'],
    [LeadListQueryDto, 'feilds=id', 'property feilds should not exist: did you mean fields?'],
    [CompanyListQueryDto, 'colour=red', 'property colour should not exist'],
    [CompanyListQueryDto, 'xy=1', 'property xy should not exist'],
  ])('%p %s: %s', async (dto, query, message) => {
    expect(await refusal(dto, query)).toMatchObject({ message: [message] });
  });
});
