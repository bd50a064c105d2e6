import { turnedOffTools, type NamedTool, type ToolSettings } from '@airlock/api/tool-settings';
import type { RunOptions } from '../lib/api-types';

export { defaultToolSettings, parseToolSettings, settingLimits, type NamedTool, type ToolSettings, type ToolSettingsPatch } from '@airlock/api/tool-settings';

/**
 * The chat.stream options for these settings. `settings` is undefined while they load from the server, and
 * `knownTools` while the server's tool list loads: then nothing is sent for them, and the server's own saved settings
 * hold (it fills in the saved limits of a run that gives none, and offers no run a tool turned off there). Before, a
 * message sent in the first moments after the page opened ran with no tools at all and the built-in limits. A tool
 * turned off under a name it no longer has stays off (`turnedOffTools`).
 */
export function toRunOptions(settings: ToolSettings | undefined, knownTools: readonly NamedTool[] | undefined): RunOptions {
  if (settings === undefined) return {};
  const options: RunOptions = {
    maxToolCalls: settings.maxToolCalls,
    toolCallTimeoutMs: settings.toolCallTimeoutSeconds * 1000,
    decisionTimeoutMs: settings.decisionTimeoutSeconds === 'never' ? 'never' : settings.decisionTimeoutSeconds * 1000,
  };
  if (settings.disabledTools.length === 0 || knownTools === undefined) return options;
  const off = turnedOffTools(settings.disabledTools, knownTools);
  return { ...options, enabledTools: knownTools.map((tool) => tool.name).filter((name) => !off.has(name)) };
}
