import { useState, type ComponentProps } from 'react';
import Markdown, { type Components } from 'react-markdown';

const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer noopener" />,
  pre: ({ node: _node, ...props }) => <CodeBlock {...props} />,
};

/** Model text as Markdown. Raw HTML is not rendered and link targets are sanitised by react-markdown. */
export function MessageMarkdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <Markdown components={components}>{text}</Markdown>
    </div>
  );
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
