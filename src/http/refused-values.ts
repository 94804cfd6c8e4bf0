/**
 * A query parameter's value refused with several messages (one per thing wrong with it), put in
 * the parameter's place by its transform: the validation pipe writes each message as an entry of
 * the 400 envelope's `message` (strict-validation.pipe.ts), where a refused value has one.
 */
export class RefusedValues {
  constructor(readonly messages: string[]) {}
}
