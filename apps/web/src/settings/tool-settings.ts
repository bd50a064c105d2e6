import type { RunOptions } from '../lib/api-types';

/** Settings of this browser for every chat. Whether calls ask first is each chat's own, kept on the server. */
export interface ToolSettings {
  /** Tool calls allowed per message, 1–200. Default 25. */
  maxToolCalls: number;
  /** How long one tool call may run, in seconds, 1–3600. Default 300. */
  toolCallTimeoutSeconds: number;
  /** How long a call waits for a decision, in seconds, or "never". Default 3600. */
  decisionTimeoutSeconds: number | 'never';
  /** Tools the model is not offered. Stored as the disabled ones so a new tool starts enabled. */
  disabledTools: string[];
  /** A system notification when a call waits while this tab is in the background. Default false. */
  notifyDecisions: boolean;
}

export const defaultToolSettings: ToolSettings = {
  maxToolCalls: 25,
  toolCallTimeoutSeconds: 300,
  decisionTimeoutSeconds: 3600,
  disabledTools: [],
  notifyDecisions: false,
};

export const settingLimits = {
  maxToolCalls: { min: 1, max: 200 },
  toolCallTimeoutSeconds: { min: 1, max: 3600 },
  decisionTimeoutSeconds: { min: 1, max: Math.floor((2 ** 31 - 1) / 1000) },
} as const;

const MAX_DISABLED_TOOLS = 500;

/** Settings from untrusted storage: every field checked and clamped, anything odd replaced by its default. */
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
      ? [...new Set(disabled.filter((name): name is string => typeof name === 'string' && name.length > 0 && name.length <= 128))].slice(0, MAX_DISABLED_TOOLS)
      : [],
    notifyDecisions: field('notifyDecisions') === true,
  };
}

export function clampInteger(raw: unknown, limits: { min: number; max: number }, fallback: number): number {
  if (typeof raw !== 'number' || !Number.isFinite(raw)) return fallback;
  return Math.min(limits.max, Math.max(limits.min, Math.round(raw)));
}

/**
 * The chat.stream options for these settings. `knownTools` is the server's tool list, or undefined while it
 * loads: then a person who disabled some tools gets none rather than all of them.
 */
export function toRunOptions(settings: ToolSettings, knownTools: readonly string[] | undefined): RunOptions {
  const options: RunOptions = {
    maxToolCalls: settings.maxToolCalls,
    toolCallTimeoutMs: settings.toolCallTimeoutSeconds * 1000,
    decisionTimeoutMs: settings.decisionTimeoutSeconds === 'never' ? 'never' : settings.decisionTimeoutSeconds * 1000,
  };
  if (settings.disabledTools.length === 0) return options;
  const disabled = new Set(settings.disabledTools);
  return { ...options, enabledTools: (knownTools ?? []).filter((name) => !disabled.has(name)) };
}
