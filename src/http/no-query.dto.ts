/** For endpoints without parameters: with the global pipe's forbidNonWhitelisted, any is a 400. */
export class NoQueryDto {}
