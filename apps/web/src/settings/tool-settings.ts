import { defaultToolSettings, turnedOffTools, type NamedTool, type ToolSettings } from '@airlock/api/tool-settings';
import type { RunOptions } from '../lib/api-types';

export { defaultToolSettings, parseToolSettings, settingLimits, type NamedTool, type ToolSettings, type ToolSettingsPatch } from '@airlock/api/tool-settings';

/**
 * The chat.stream options for these settings. `settings` is undefined while they load from the server, and
 * `knownTools` while the server's tool list loads: either way a person who may have turned tools off gets none
 * rather than all of them. A tool turned off under a name it no longer has stays off (`turnedOffTools`).
 */
export function toRunOptions(settings: ToolSettings | undefined, knownTools: readonly NamedTool[] | undefined): RunOptions {
  const chosen = settings ?? defaultToolSettings;
  const options: RunOptions = {
    maxToolCalls: chosen.maxToolCalls,
    toolCallTimeoutMs: chosen.toolCallTimeoutSeconds * 1000,
    decisionTimeoutMs: chosen.decisionTimeoutSeconds === 'never' ? 'never' : chosen.decisionTimeoutSeconds * 1000,
  };
  if (settings === undefined) return { ...options, enabledTools: [] };
  if (settings.disabledTools.length === 0) return options;
  const off = turnedOffTools(settings.disabledTools, knownTools ?? []);
  return { ...options, enabledTools: (knownTools ?? []).map((tool) => tool.name).filter((name) => !off.has(name)) };
}
