import type { ReactNode } from 'react';
import { proseText } from './prose-text';
import './reply-link.css';

/**
 * A link in a model's reply, drawn as a link but made a button: a click opens its address in a new tab, with no
 * referrer and no way back to this page; its full address shows on hover. Not an `<a href>`: Chromium looks up the
 * host of a link the pointer passes over (to connect ahead), so a prompt-injected model could write what the chat
 * holds into a host name (`<secret>.attacker.example`) and have it reach that domain's name server without a click.
 * An address react-markdown emptied (`javascript:`, `data:`) leaves the text alone. A user name and password in the
 * address (`http://trusted.example@other.example/`) are dropped, from what shows and from what opens: the address
 * shown on hover began with a host the click did not open. The address shown is the one opened, its host as the
 * browser resolves it.
 */
export function ReplyLink({ href, children }: { href: string | undefined; children?: ReactNode }) {
  if (href === undefined || href === '') return <span>{children}</span>;
  const address = withoutCredentials(href);
  return (
    <button type="button" className="reply-link" title={proseText(address)} onClick={() => window.open(address, '_blank', 'noopener,noreferrer')}>
      {children}
    </button>
  );
}

/**
 * An image in a reply, drawn as its alt text: the page loads no image a model names (its address could carry what the
 * chat holds, and a picture could draw a card or a button that is not one). Its address shows on hover, as a link's.
 */
export function ReplyImage({ src, alt }: { src: string | undefined; alt: string | undefined }) {
  const label = alt === undefined || alt === '' ? 'image' : `image: ${alt}`;
  return (
    <span className="reply-image" role="img" aria-label={label} title={src === undefined || src === '' ? undefined : proseText(withoutCredentials(src))}>
      [{label}]
    </span>
  );
}

/**
 * The address as the browser opens it, with any user name and password taken out: a host name in another script as
 * its punycode (`https://аpple.com` is `https://xn--pple-43d.com/`), which is where a click goes. An address with no
 * scheme is read against the page's, as the browser reads it: `//airlock-….localhost:7840@evil.example/`, left as
 * written, showed Airlock's host first and opened evil.example. One the browser cannot read is left as it is.
 */
export function withoutCredentials(href: string): string {
  let url: URL;
  try {
    url = new URL(href, document.baseURI);
  } catch {
    return href;
  }
  url.username = '';
  url.password = '';
  return url.href;
}
