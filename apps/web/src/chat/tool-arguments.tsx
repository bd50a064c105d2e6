import type { ToolArguments as Args } from '../lib/api-types';

/** The argument that is the whole point of a code-running tool: shown as code, not as JSON. */
const CODE_ARGUMENTS = new Map([
  ['terminal', { key: 'command', label: 'Command' }],
  ['python', { key: 'code', label: 'Code' }],
]);

export function ToolArguments({ toolName, args }: { toolName: string; args: Args }) {
  const code = CODE_ARGUMENTS.get(toolName);
  const codeText = code && Object.hasOwn(args, code.key) ? args[code.key] : undefined;
  if (code && typeof codeText === 'string') {
    const rest = Object.fromEntries(Object.entries(args).filter(([key]) => key !== code.key));
    return (
      <div className="tool-arguments">
        <div className="field-label">{code.label}</div>
        <pre className="code-block" data-language={toolName === 'python' ? 'python' : 'shell'}>
          <code>{codeText}</code>
        </pre>
        {Object.keys(rest).length > 0 && <JsonBlock label="Other arguments" value={rest} />}
      </div>
    );
  }
  if (Object.keys(args).length === 0) return <p className="tool-arguments muted">No arguments</p>;
  return (
    <div className="tool-arguments">
      <JsonBlock label="Arguments" value={args} />
    </div>
  );
}

function JsonBlock({ label, value }: { label: string; value: unknown }) {
  return (
    <>
      <div className="field-label">{label}</div>
      <pre className="code-block" data-language="json">
        <code>{JSON.stringify(value, null, 2)}</code>
      </pre>
    </>
  );
}
