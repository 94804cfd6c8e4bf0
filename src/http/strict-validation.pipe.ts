import {
  type ArgumentMetadata,
  BadRequestException,
  ValidationPipe,
  type ValidationPipeOptions,
} from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { suggestedParameter } from './parameter-suggestion';
import { RefusedValue } from './query-parameter';

/**
 * How every parameter of the API is validated: the global pipe's options (app.module.ts), and the
 * MCP tools' (src/mcp), which validate their arguments as the same queries.
 */
export const VALIDATION_OPTIONS: ValidationPipeOptions = {
  transform: true,
  whitelist: true,
  forbidNonWhitelisted: true,
  stopAtFirstError: true,
  // Each error keeps its DTO, whose parameters name what an unknown one was likely meant to be
  // (flattenValidationErrors); the answer holds the messages only.
  validationError: { target: true },
};

// Deleted by ValidationPipe itself before anything else, against prototype pollution.
const STRIPPED_NAMES = ['__proto__', 'prototype', 'constructor'];

/**
 * The ValidationPipe, refusing also the parameters that are dropped without a word before
 * validation: those ValidationPipe deletes (`__proto__`, `prototype`, `constructor`), and names the
 * DTO already inherits (`toString`, `hasOwnProperty`...), which class-transformer skips instead of
 * copying. Without this, `?prototype=1` would be served as if the parameter had not been sent,
 * where forbidNonWhitelisted refuses every other unknown name.
 */
export class StrictValidationPipe extends ValidationPipe {
  private readonly validQueries = new ValidQueries();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const inherited = this.inheritedNames(value, metadata);
    if (inherited.length === 0) {
      const { metatype } = metadata;
      const text = metatype && this.toValidate(metadata) ? queryText(value) : undefined;
      if (text === undefined || !metatype) return super.transform(value, metadata);
      // Found valid before: what ValidationPipe returned for it then, frozen (read, never written).
      const validated = this.validQueries.get(metatype, text);
      if (validated !== undefined) return validated;
      const entity: unknown = await super.transform(value, metadata);
      this.validQueries.add(metatype, text, deepFreeze(entity));
      return entity;
    }

    const messages = inherited.map((name) => `property ${name} should not exist`);
    const rest = Object.fromEntries(
      Object.entries(value as object).filter(([name]) => !inherited.includes(name)),
    );
    try {
      await super.transform(rest, metadata);
    } catch (error) {
      // One entry per violated constraint, the others' included, as for any other unknown name.
      if (!(error instanceof BadRequestException)) throw error;
      const { message } = error.getResponse() as { message?: unknown };
      messages.push(...(Array.isArray(message) ? (message as string[]) : [error.message]));
    }
    throw new BadRequestException(messages);
  }

  /**
   * One entry per message of a refused value (query-parameter.ts); an unknown parameter's names
   * the parameter it is likely a typo of, when there is one (parameter-suggestion.ts).
   */
  protected override flattenValidationErrors(errors: ValidationError[]): string[] {
    return errors.flatMap((error) => {
      if (error.value instanceof RefusedValue) return error.value.messages;
      const messages = super.flattenValidationErrors([error]);
      const dto = error.target?.constructor as (abstract new () => unknown) | undefined;
      const meant =
        error.constraints?.whitelistValidation !== undefined && dto !== undefined
          ? suggestedParameter(dto, error.property)
          : undefined;
      return meant === undefined
        ? messages
        : messages.map((text) => `${text}: did you mean ${meant}?`);
    });
  }

  private inheritedNames(value: unknown, metadata: ArgumentMetadata): string[] {
    const { metatype } = metadata;
    if (!this.validatorOptions.forbidNonWhitelisted || !metatype || !this.toValidate(metadata)) {
      return [];
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
    const prototype = metatype.prototype as object;
    return Object.keys(value).filter((name) => STRIPPED_NAMES.includes(name) || name in prototype);
  }
}

// A query text longer than this is validated each time (a real client's are a few dozen bytes).
const MAX_REMEMBERED_TEXT = 512;
// Texts remembered per DTO; when full, they are forgotten all at once (a client cycling through
// more distinct queries than this costs what every query cost before).
const REMEMBERED_PER_DTO = 1_000;

/**
 * A query's parameters as a text, when they are what an HTTP query string parses into (every value
 * a string or a list of strings): the same text makes the same DTO. Anything else (the MCP tools'
 * arguments, with numbers and booleans) has no text, and is validated each time.
 */
function queryText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  for (const given of Object.values(value)) {
    if (typeof given === 'string') continue;
    if (Array.isArray(given) && given.every((item) => typeof item === 'string')) continue;
    return undefined;
  }
  const text = JSON.stringify(value);
  return text.length <= MAX_REMEMBERED_TEXT ? text : undefined;
}

/**
 * The queries that passed validation, per DTO class, each with what ValidationPipe made of it. A
 * DTO's checks and its transformation are pure functions of the query (no clock, no state: the
 * same text always passes or fails the same way and makes the same DTO), so a text that passed once
 * is answered with the DTO made then, frozen so that no request can change it for the next.
 * Measured on Node 24 with the shipped flags (50,000 calls after a warm-up, twice): `limit=50` for
 * the companies list took 32 to 37 µs of CPU validated, 9 µs transformed again; in a later run,
 * with the query string's parsing, 3.4 to 3.6 µs transformed again and 1.6 µs remembered whole
 * (docs/benchmarks.md, "The fixed cost of a request"). Clients repeat their queries (`limit=50`, a
 * sync's offsets). A refused text is never remembered.
 */
class ValidQueries {
  private readonly byDto = new Map<unknown, Map<string, unknown>>();

  get(dto: unknown, text: string): unknown {
    return this.byDto.get(dto)?.get(text);
  }

  add(dto: unknown, text: string, validated: unknown): void {
    let texts = this.byDto.get(dto);
    if (texts === undefined) this.byDto.set(dto, (texts = new Map<string, unknown>()));
    else if (texts.size >= REMEMBERED_PER_DTO) texts.clear();
    texts.set(text, validated);
  }
}

/** `value` and every object and array it holds, frozen. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const held of Object.values(value)) deepFreeze(held);
  }
  return value;
}
