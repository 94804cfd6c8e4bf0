/** The longest endpoint URL accepted (the spec's 2,048 characters). */
export const MAX_URL_LENGTH = 2_048;

/**
 * Why `text` cannot be an endpoint's URL, or null when it can: an absolute https:// URL (http://
 * too when `allowHttp`), at most MAX_URL_LENGTH characters, without credentials (they would be
 * stored and shown in `webhook list` in clear). Where it points is checked at each send, by the
 * network guard, since a name's addresses change.
 */
export function urlProblem(text: string, allowHttp: boolean): string | null {
  if (text.length > MAX_URL_LENGTH) return `the URL is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'the URL is not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    return allowHttp
      ? 'the URL must start with https:// or http://'
      : 'the URL must start with https:// (http:// only with WEBHOOK_ALLOW_HTTP=true)';
  }
  if (url.username !== '' || url.password !== '') {
    return 'the URL must not contain credentials (user:password@)';
  }
  return null;
}
