// The package's entry point: the client, its errors and the contract's types.
export { Client, PAGE_SIZE, type ClientOptions } from './client.js';
export {
  ApiError,
  BadRequestError,
  InternalServerError,
  NetworkError,
  RateLimitError,
  ServiceUnavailableError,
  UnauthorizedError,
} from './errors.js';
export type {
  Company,
  CompanyPage,
  Contact,
  ErrorEnvelope,
  Lead,
  LeadPage,
  ListParams,
  Workspace,
} from './types.js';
export type { components, operations, paths } from './schema.js';
