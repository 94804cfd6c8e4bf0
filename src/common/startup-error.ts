/**
 * A start that cannot go on, with a message that says everything an operator needs (what to set
 * or run): server/serve.ts prints the message alone, without a stack.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}
