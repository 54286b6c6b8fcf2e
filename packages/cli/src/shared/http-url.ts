import { InvalidOptionError } from 'oncely';

/** An absolute http(s) URL, as given to `option`; anything else is refused before anything starts. */
export function httpUrl(option: string, text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new InvalidOptionError(option, text, 'an absolute http:// or https:// URL');
  return url.href;
}
