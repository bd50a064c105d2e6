import { turnedOffTools, withToolsTurned } from '@airlock/api/tool-settings';
import { toVisibleProse, toVisibleText } from '@airlock/core';
import { toolBadges } from '../chat/tool-badges';
import { VisibleTextView } from '../chat/tool-arguments';
import type { ToolInfo, ToolServer } from '../lib/api-types';

export interface EnabledToolsProps {
  tools: readonly ToolInfo[];
  servers: readonly ToolServer[];
  disabled: readonly string[];
  onChange: (disabled: string[]) => void;
}

interface ToolGroup {
  key: string;
  title: string;
  server: ToolServer | undefined;
  tools: ToolInfo[];
}

/**
 * Tools grouped as built-in and one group per MCP server, each tool with its own checkbox and the badges of its
 * card (the group already names the server). A tool turned off under a name it no longer has shows off
 * (`turnedOffTools`).
 */
export function EnabledTools({ tools, servers, disabled, onChange }: EnabledToolsProps) {
  const off = turnedOffTools(disabled, tools);
  const set = (names: readonly string[], enabled: boolean) => onChange(withToolsTurned(disabled, tools, names, enabled));
  return (
    <div className="enabled-tools">
      {groupTools(tools, servers).map((group) => {
        const names = group.tools.map((tool) => tool.name);
        const allOn = names.every((name) => !off.has(name));
        return (
          <fieldset key={group.key} className="tool-group">
            <legend>
              {group.title}
              {group.server && (
                <span className="muted">
                  {' '}
                  · {group.server.state}
                  {/* The server's words (its stderr quoted): what could hide or reorder them is shown as codes, as on the card. */}
                  {group.server.error ? (
                    <>
                      : <VisibleTextView text={toVisibleProse(group.server.error)} />
                    </>
                  ) : null}
                </span>
              )}
            </legend>
            {names.length > 1 && (
              <button type="button" className="btn btn-small" aria-label={`${allOn ? 'Turn off' : 'Turn on'} all of ${group.title}`} onClick={() => set(names, !allOn)}>
                {allOn ? 'Turn all off' : 'Turn all on'}
              </button>
            )}
            {group.tools.length === 0 && <p className="muted">No tools.</p>}
            {group.tools.map((tool) => (
              <label key={tool.name} className="tool-toggle">
                <input type="checkbox" checked={!off.has(tool.name)} onChange={(event) => set([tool.name], event.target.checked)} />
                <code>
                  <VisibleTextView text={toVisibleText(tool.name, { singleLine: true })} />
                </code>
                {toolBadges(tool.name, tool.source, tool.annotations)
                  .filter((badge) => badge.tone !== 'source')
                  .map((badge) => (
                    <span key={badge.label} className={`badge badge-${badge.tone}`} title={badge.title}>
                      {badge.label}
                    </span>
                  ))}
                {/* An MCP server writes it: shown with the escaping the card gives untrusted text. */}
                <span className="tool-description">
                  <VisibleTextView text={toVisibleProse(tool.description)} />
                </span>
              </label>
            ))}
          </fieldset>
        );
      })}
    </div>
  );
}

function groupTools(tools: readonly ToolInfo[], servers: readonly ToolServer[]): ToolGroup[] {
  const groups = new Map<string, ToolGroup>([['builtin', { key: 'builtin', title: 'Built-in tools', server: undefined, tools: [] }]]);
  for (const server of servers) {
    groups.set(`mcp:${server.name}`, { key: `mcp:${server.name}`, title: `MCP: ${server.name}`, server, tools: [] });
  }
  for (const tool of tools) {
    let group = groups.get(tool.source);
    if (!group) {
      group = { key: tool.source, title: tool.source, server: undefined, tools: [] };
      groups.set(tool.source, group);
    }
    group.tools.push(tool);
  }
  return [...groups.values()];
}
