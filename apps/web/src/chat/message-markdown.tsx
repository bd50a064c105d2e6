import { Component, memo, useState, type ComponentProps, type ReactNode } from 'react';
import Markdown, { type Components } from 'react-markdown';
import { MarkdownBlocks, type ParsedNode } from './markdown-blocks';
import { tooCostlyToParse, tooDeep } from './markdown-weight';
import { markHiddenCharacters, proseText } from './prose-text';
import { ReplyImage, ReplyLink } from './reply-link';
import { useStreamedText } from './use-streamed-text';

const components: Components = {
  a: ({ node: _node, href, children }) => <ReplyLink href={href}>{children}</ReplyLink>,
  img: ({ node: _node, src, alt }) => <ReplyImage src={typeof src === 'string' ? src : undefined} alt={alt} />,
  pre: ({ node: _node, ...props }) => <CodeBlock {...props} />,
};

/**
 * Model text as Markdown. Raw HTML is not rendered, images are drawn as their alt text (none is loaded), link targets are sanitised by react-markdown and links are buttons
 * (`ReplyLink`); characters that hide or reorder text are shown as escapes (`proseText`). Text too deeply nested or
 * too costly to parse, or that fails to render, is shown as it is, whole, with a note, and only this message is
 * affected. While a reply streams in,
 * it is rendered once an animation frame, and only its last block is parsed again (see `MarkdownBlocks`).
 */
export const MessageMarkdown = memo(function MessageMarkdown({ text }: { text: string }) {
  return <MarkdownText text={useStreamedText(text)} />;
});

const MarkdownText = memo(function MarkdownText({ text }: { text: string }) {
  const [blocks] = useState(() => new MarkdownBlocks());
  const { done, rest, restStart, weight } = blocks.split(text);
  // Only `rest` is parsed: the done blocks were, when they were part of it.
  if (tooDeep(weight) || tooCostlyToParse(rest)) return <PlainText text={text} />;
  // Learnt while rendering, from the parse react-markdown makes anyway: what is learnt depends only on the text and
  // is used only for a text that starts with it, so a render React throws away leaves nothing wrong behind.
  const learn = () => (tree: ParsedNode) => blocks.parsed(text, restStart, tree);
  return (
    <MarkdownBoundary text={text}>
      <div className="markdown">
        {done.map((block, index) => (
          <DoneBlock key={index} text={block} />
        ))}
        <Markdown components={components} remarkPlugins={[learn, markHiddenCharacters]}>
          {rest}
        </Markdown>
      </div>
    </MarkdownBoundary>
  );
});

/** A complete block, parsed once, and the line end the whole text's rendering has between top-level blocks. */
const DoneBlock = memo(function DoneBlock({ text }: { text: string }) {
  return (
    <>
      <Markdown components={components} remarkPlugins={[markHiddenCharacters]}>
        {text}
      </Markdown>
      {'\n'}
    </>
  );
});

/** All of a text as written (hidden characters as escapes), to read and copy, with a note saying why. */
function PlainText({ text }: { text: string }) {
  return (
    <div className="markdown">
      <p className="note plain-text-note">Shown as plain text: this reply is too large or too deeply nested to format. None of it is left out.</p>
      <p className="plain-text">{proseText(text)}</p>
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
