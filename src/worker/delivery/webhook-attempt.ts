/** One delivery attempt of one event to one endpoint: what the sender needs, nothing more. */
export interface WebhookAttempt {
  url: string;
  /** Decoded signing keys (the bytes after `whsec_`), current first; two during a rotation. */
  signingKeys: Buffer[];
  /** `webhook-id`: the event id, the same on every attempt (the receiver's idempotency key). */
  eventId: string;
  /** The JSON body, signed exactly as sent. */
  body: string;
  /** When this attempt is sent: `webhook-timestamp` is its Unix seconds. */
  sentAt: Date;
}

/** What became of one attempt; the worker records it and decides what comes next. */
export interface AttemptOutcome {
  /** A 2xx within the timeout. */
  delivered: boolean;
  /** The HTTP status, when one was received. */
  status?: number;
  /** Why it failed without a status (timeout, refused address, connection error, ...). */
  error?: string;
  /** A 410: the receiver asks us to stop; the worker disables the endpoint. */
  gone: boolean;
  /** From `Retry-After` on a 429 or 503 (seconds or an HTTP date). */
  retryAfterMs?: number;
  durationMs: number;
  /** At most 1 KB of the response body, for `webhook deliveries`. */
  responseExcerpt: string;
}

export interface SendOptions {
  /** Test-only: lets receivers on 127.0.0.1 through the network guard. */
  allowPrivateNetworks: boolean;
  /** Plain `http://` URLs (WEBHOOK_ALLOW_HTTP); otherwise only `https://`. */
  allowHttp?: boolean;
  /** Connect plus response, in total. Default 15 000. */
  timeoutMs?: number;
  /** Resolves a hostname to its addresses; injectable for tests. Default: the system resolver. */
  lookup?: (hostname: string) => Promise<string[]>;
}
