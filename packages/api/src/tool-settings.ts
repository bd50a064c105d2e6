import { z } from 'zod';

/**
 * The web app's settings for every chat, kept by the server (one record for every browser and origin). Whether calls
 * ask first is each chat's own (`sessions.update`). Imported by the web app through `@airlock/api/tool-settings`:
 * this module needs zod only.
 */

export const settingLimits = {
  maxToolCalls: { min: 1, max: 200 },
  toolCallTimeoutSeconds: { min: 1, max: 3600 },
  decisionTimeoutSeconds: { min: 1, max: Math.floor((2 ** 31 - 1) / 1000) },
} as const;

/** The most tool names `disabledTools` holds. */
export const MAX_DISABLED_TOOLS = 500;
const MAX_TOOL_NAME_LENGTH = 128;

const integerIn = (limits: { min: number; max: number }) => z.number().int().min(limits.min).max(limits.max);

export const toolSettingsSchema = z.strictObject({
  /** Tool calls allowed per message, 1–200. Default 25. */
  maxToolCalls: integerIn(settingLimits.maxToolCalls),
  /** How long one tool call may run, in seconds, 1–3600. Default 300. */
  toolCallTimeoutSeconds: integerIn(settingLimits.toolCallTimeoutSeconds),
  /** How long a call waits for a decision, in seconds, or "never". Default 3600. */
  decisionTimeoutSeconds: z.union([integerIn(settingLimits.decisionTimeoutSeconds), z.literal('never')]),
  /** Tools the model is not offered. Stored as the disabled ones so a new tool starts enabled. */
  disabledTools: z.array(z.string().min(1).max(MAX_TOOL_NAME_LENGTH)).max(MAX_DISABLED_TOOLS),
  /** A system notification when a call waits while the tab is in the background. Default false. */
  notifyDecisions: z.boolean(),
});

export type ToolSettings = z.infer<typeof toolSettingsSchema>;

/** `settings.update`: the fields to change, each checked against its limits (a value outside them is refused). */
export const toolSettingsPatchSchema = toolSettingsSchema.partial();

export type ToolSettingsPatch = z.infer<typeof toolSettingsPatchSchema>;

export const defaultToolSettings: ToolSettings = Object.freeze({
  maxToolCalls: 25,
  toolCallTimeoutSeconds: 300,
  decisionTimeoutSeconds: 3600,
  disabledTools: [],
  notifyDecisions: false,
});

/** A tool as `tools.list` gives it, as far as `disabledTools` is concerned. */
export interface NamedTool {
  name: string;
  /** Names a setting may hold for the tool beside its own (an MCP tool's name without or with its hash). Default none. */
  otherNames?: readonly string[];
}

/**
 * The tools of `tools` that `disabledTools` turns off, by their names: each listed under its own name or under one of
 * its other names that is no tool's own. The plain `<server>__<tool>` a person turned off may be hashed now, since it
 * would read as another server's tool, and may then mean two servers' tools: each stays off, as a deny rule naming it
 * denies each. A name listed with the hash, the tool plain again, means that tool alone.
 */
export function turnedOffTools(disabledTools: readonly string[], tools: readonly NamedTool[]): Set<string> {
  const listed = new Set(disabledTools);
  const own = new Set(tools.map((tool) => tool.name));
  const off = new Set<string>();
  for (const tool of tools) {
    if (listed.has(tool.name) || (tool.otherNames ?? []).some((other) => listed.has(other) && !own.has(other))) off.add(tool.name);
  }
  return off;
}

/**
 * `disabledTools` with the tools named `names` turned on or off. Turning one on takes out its own name and its other
 * names; a tool of `tools` one of those also turned off stays off, listed under its own name from then on.
 */
export function withToolsTurned(disabledTools: readonly string[], tools: readonly NamedTool[], names: readonly string[], enabled: boolean): string[] {
  const next = new Set(disabledTools);
  if (!enabled) {
    for (const name of names) next.add(name);
    return [...next];
  }
  const own = new Map(tools.map((tool) => [tool.name, tool]));
  const before = turnedOffTools(disabledTools, tools);
  for (const name of names) {
    next.delete(name);
    for (const other of own.get(name)?.otherNames ?? []) if (!own.has(other)) next.delete(other);
  }
  const after = turnedOffTools([...next], tools);
  const turnedOn = new Set(names);
  for (const name of before) if (!turnedOn.has(name) && !after.has(name)) next.add(name);
  return [...next];
}

/**
 * Settings from untrusted storage (the store's record, a browser's old local copy): every field checked and
 * clamped, anything odd replaced by its default.
 */
export function parseToolSettings(raw: unknown): ToolSettings {
  const value = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const field = (name: keyof ToolSettings): unknown => (Object.hasOwn(value, name) ? value[name] : undefined);
  const decision = field('decisionTimeoutSeconds');
  const disabled = field('disabledTools');
  return {
    maxToolCalls: clampInteger(field('maxToolCalls'), settingLimits.maxToolCalls, defaultToolSettings.maxToolCalls),
    toolCallTimeoutSeconds: clampInteger(field('toolCallTimeoutSeconds'), settingLimits.toolCallTimeoutSeconds, defaultToolSettings.toolCallTimeoutSeconds),
    decisionTimeoutSeconds:
      decision === 'never' ? 'never' : clampInteger(decision, settingLimits.decisionTimeoutSeconds, defaultToolSettings.decisionTimeoutSeconds as number),
    disabledTools: Array.isArray(disabled)
      ? [...new Set(disabled.filter((name): name is string => typeof name === 'string' && name.length > 0 && name.length <= MAX_TOOL_NAME_LENGTH))].slice(
          0,
          MAX_DISABLED_TOOLS,
        )
      : [],
    notifyDecisions: field('notifyDecisions') === true,
  };
}

export function clampInteger(raw: unknown, limits: { min: number; max: number }, fallback: number): number {
  if (typeof raw !== 'number' || !Number.isFinite(raw)) return fallback;
  return Math.min(limits.max, Math.max(limits.min, Math.round(raw)));
}
