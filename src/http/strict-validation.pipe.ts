import {
  type ArgumentMetadata,
  BadRequestException,
  ValidationPipe,
  type ValidationPipeOptions,
} from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { RefusedValues } from './refused-values';

/**
 * How every parameter of the API is validated: the global pipe's options (app.module.ts), and the
 * MCP tools' (src/mcp), which validate their arguments as the same queries.
 */
export const VALIDATION_OPTIONS: ValidationPipeOptions = {
  transform: true,
  whitelist: true,
  forbidNonWhitelisted: true,
  stopAtFirstError: true,
};

// Deleted by ValidationPipe itself before anything else, against prototype pollution.
const STRIPPED_NAMES = ['__proto__', 'prototype', 'constructor'];

/**
 * The ValidationPipe, refusing also the parameters that are dropped without a word before
 * validation: those ValidationPipe deletes (`__proto__`, `prototype`, `constructor`), and names the
 * DTO already inherits (`toString`, `hasOwnProperty`...), which class-transformer skips instead of
 * copying. Without this, `?prototype=1` was served as if the parameter had not been sent, where
 * forbidNonWhitelisted refuses every other unknown name.
 */
export class StrictValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const inherited = this.inheritedNames(value, metadata);
    if (inherited.length === 0) return super.transform(value, metadata);

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

  /** One entry per message of a value refused with several (refused-values.ts). */
  protected override flattenValidationErrors(errors: ValidationError[]): string[] {
    return errors.flatMap((error) =>
      error.value instanceof RefusedValues
        ? error.value.messages
        : super.flattenValidationErrors([error]),
    );
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
