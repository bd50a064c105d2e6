import { describe, expect, it } from 'vitest';
import { defaultToolSettings, parseToolSettings, toolSettingsSchema } from './tool-settings';

describe('parseToolSettings', () => {
  it('drops the confirmation setting a browser used to keep for every chat', () => {
    expect(parseToolSettings({ confirmToolCalls: false })).toStrictEqual(defaultToolSettings);
  });

  it('uses the defaults for anything missing or malformed', () => {
    expect(parseToolSettings(null)).toStrictEqual(defaultToolSettings);
    expect(parseToolSettings({ maxToolCalls: 'many', disabledTools: 'terminal' })).toStrictEqual(defaultToolSettings);
  });

  it('clamps numbers into their limits and keeps "never"', () => {
    expect(parseToolSettings({ maxToolCalls: 999, toolCallTimeoutSeconds: 0, decisionTimeoutSeconds: 'never' })).toStrictEqual({
      ...defaultToolSettings,
      maxToolCalls: 200,
      toolCallTimeoutSeconds: 1,
      decisionTimeoutSeconds: 'never',
    });
  });

  it('keeps only plausible tool names, once each', () => {
    expect(parseToolSettings({ disabledTools: ['python', 'python', '', 7, 'x'.repeat(129)] }).disabledTools).toStrictEqual(['python']);
  });

  it('ignores inherited keys', () => {
    const sneaky = Object.create({ maxToolCalls: 3 }) as object;
    expect(parseToolSettings(sneaky).maxToolCalls).toBe(25);
  });

  it('answers settings the strict schema accepts, whatever it was given', () => {
    for (const raw of [null, { maxToolCalls: 1e9, decisionTimeoutSeconds: -4, disabledTools: Array.from({ length: 600 }, (_, i) => `t${i}`) }]) {
      expect(toolSettingsSchema.safeParse(parseToolSettings(raw)).success).toBe(true);
    }
  });
});
