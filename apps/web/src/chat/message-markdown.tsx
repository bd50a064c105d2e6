import { Component, useState, type ComponentProps, type ReactNode } from 'react';
import Markdown, { type Components } from 'react-markdown';

const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer noopener" />,
  pre: ({ node: _node, ...props }) => <CodeBlock {...props} />,
};

/** Nesting markers at the start of one line (`- - - > x`) past which a text is shown as it is. */
const MAX_LINE_NESTING = 32;
/** Emphasis, link, quote and code markers in one text past which it is shown as it is. */
const MAX_MARKERS = 10_000;
const LINE_NESTING = /^(?:[ \t]*(?:[-*+>]|\d{1,9}[.)])(?=[ \t]|$)[ \t]*)+/gm;

/**
 * Whether model text is too deeply nested to render as Markdown: the parser and React recurse once per level, and
 * a reply of 2 KB (`'- '.repeat(1000)`) overflowed the stack, one of 40 KB froze the tab. Linear in the text.
 */
export function tooDeepForMarkdown(text: string): boolean {
  let markers = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // * _ [ ] > `
    if (code === 42 || code === 95 || code === 91 || code === 93 || code === 62 || code === 96) markers++;
  }
  if (markers > MAX_MARKERS) return true;
  for (const match of text.matchAll(LINE_NESTING)) {
    let levels = 0;
    for (const char of match[0]) if (char !== ' ' && char !== '\t' && !(char >= '0' && char <= '9') && char !== '.' && char !== ')') levels++;
    if (levels + (match[0].match(/\d+[.)]/g)?.length ?? 0) > MAX_LINE_NESTING) return true;
  }
  return false;
}

/**
 * Model text as Markdown. Raw HTML is not rendered and link targets are sanitised by react-markdown. Text too deeply
 * nested to render, or that fails to, is shown as it is, and only this message is affected.
 */
export function MessageMarkdown({ text }: { text: string }) {
  if (tooDeepForMarkdown(text)) return <PlainText text={text} />;
  return (
    <MarkdownBoundary text={text}>
      <div className="markdown">
        <Markdown components={components}>{text}</Markdown>
      </div>
    </MarkdownBoundary>
  );
}

function PlainText({ text }: { text: string }) {
  return (
    <div className="markdown">
      <p className="plain-text">{text}</p>
    </div>
  );
}

class MarkdownBoundary extends Component<{ text: string; children: ReactNode }, { failedOn: string | null }> {
  override state: { failedOn: string | null } = { failedOn: null };

  static getDerivedStateFromError(): Partial<{ failedOn: string | null }> {
    return { failedOn: '' };
  }

  override componentDidCatch(): void {
    this.setState({ failedOn: this.props.text });
  }

  override render(): ReactNode {
    const { failedOn } = this.state;
    // A new text (the message still streaming) is tried again.
    if (failedOn !== null && (failedOn === '' || failedOn === this.props.text)) return <PlainText text={this.props.text} />;
    return this.props.children;
  }
}

function CodeBlock(props: ComponentProps<'pre'>) {
  const [copied, setCopied] = useState(false);
  const copy = (target: HTMLElement | null) => {
    const text = target?.closest('.code-wrap')?.querySelector('pre')?.textContent ?? '';
    if (!navigator.clipboard) return;
    void navigator.clipboard.writeText(text).then(() => setCopied(true));
  };
  return (
    <div className="code-wrap">
      <pre {...props} className="code-block" />
      <button type="button" className="btn btn-small copy" aria-label="Copy code" onClick={(event) => copy(event.currentTarget)}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}
