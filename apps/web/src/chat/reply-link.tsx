import type { ReactNode } from 'react';
import './reply-link.css';

/**
 * A link in a model's reply, drawn as a link but made a button: a click opens its address in a new tab, with no
 * referrer and no way back to this page; its full address shows on hover. Not an `<a href>`: Chromium looks up the
 * host of a link the pointer passes over (to connect ahead), so a prompt-injected model could write what the chat
 * holds into a host name (`<secret>.attacker.example`) and have it reach that domain's name server without a click.
 * An address react-markdown emptied (`javascript:`, `data:`) leaves the text alone.
 */
export function ReplyLink({ href, children }: { href: string | undefined; children?: ReactNode }) {
  if (href === undefined || href === '') return <span>{children}</span>;
  return (
    <button type="button" className="reply-link" title={href} onClick={() => window.open(href, '_blank', 'noopener,noreferrer')}>
      {children}
    </button>
  );
}
