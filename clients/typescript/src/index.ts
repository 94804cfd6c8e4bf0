// The package's entry point: the client, its errors and the contract's types.
export { Client, CHANGES_PAGE_SIZE, PAGE_SIZE, type ClientOptions } from './client.js';
export {
  ApiError,
  BadRequestError,
  CursorExpiredError,
  ForbiddenError,
  InternalServerError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
  UnauthorizedError,
} from './errors.js';
export type {
  ChangeFeedOptions,
  ChangePage,
  ChangeStreamOptions,
  ChangesParams,
  Company,
  CompanyChange,
  CompanyChangePage,
  CompanyField,
  CompanyPage,
  CompanyUpsert,
  Contact,
  ErrorEnvelope,
  ItemDeletion,
  Lead,
  LeadChange,
  LeadChangePage,
  LeadField,
  LeadPage,
  LeadUpsert,
  ListParams,
  FieldsParam,
  Page,
  SelectedCompany,
  SelectedLead,
  CompanyListParams,
  LeadListParams,
  Workspace,
} from './types.js';
export {
  parseRateLimits,
  type RateLimitPolicy,
  type RateLimits,
  type RateLimitState,
} from './rate-limit.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookEvent,
  type WebhookHeaders,
} from './webhooks.js';
export type { components, operations, paths } from './schema.js';
