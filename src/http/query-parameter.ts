import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy } from 'class-validator';

/**
 * A query parameter's value refused, with one message per thing wrong with it, put in the
 * parameter's place by its parse: the validation pipe writes each message as an entry of the 400
 * envelope's `message` (strict-validation.pipe.ts).
 */
export class RefusedValue {
  readonly messages: string[];

  constructor(...messages: string[]) {
    this.messages = messages;
  }
}

/** An optional query parameter as declared: how its value is read, and its OpenAPI schema. */
export interface QueryParameterDeclaration<T> {
  /**
   * The value given, parsed or refused: a string, an array of them when the parameter was
   * repeated, or any JSON value (the MCP tools' arguments).
   */
  parse: (raw: unknown) => T | RefusedValue;
  apiProperty: ApiPropertyOptions;
}

/**
 * An optional query parameter of a DTO, from its declaration: parsed, refused with its messages,
 * described in the OpenAPI document. On a property (`@QueryParameter(pages) page?: string[]`), or
 * on a class made from declarations (`QueryParameter(declaration)(Query.prototype, name)`).
 */
export function QueryParameter<T>({
  parse,
  apiProperty,
}: QueryParameterDeclaration<T>): PropertyDecorator {
  // Applied in this order: described, then (as the pipe runs them) parsed, then skipped when
  // absent, then the one check that names what is wrong.
  return applyDecorators(
    ApiPropertyOptional(apiProperty),
    ValidateBy({
      name: 'isParameterValue',
      validator: {
        validate: (value: unknown) => !(value instanceof RefusedValue),
        defaultMessage: (args) => (args?.value as RefusedValue).messages.join('; '),
      },
    }),
    IsOptional(),
    Transform(({ value }: { value: unknown }) => (value === undefined ? undefined : parse(value))),
  );
}

/** The texts given: one, or several when the parameter was repeated; refused if any is not text. */
export function givenTexts(name: string, raw: unknown): string[] | RefusedValue {
  const given: unknown[] = Array.isArray(raw) ? raw : [raw];
  return given.every((value) => typeof value === 'string')
    ? given
    : new RefusedValue(`${name} must be text`);
}

/** The one text given: refused if it is not text, or the parameter was repeated. */
export function givenOnce(name: string, raw: unknown): string | RefusedValue {
  const given = givenTexts(name, raw);
  if (given instanceof RefusedValue) return given;
  return given.length > 1 ? new RefusedValue(`${name} must be given only once`) : given[0];
}

/** A value as a message shows it: in quotes, cut, and JSON-escaped so no control character passes. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
}
