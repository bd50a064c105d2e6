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
