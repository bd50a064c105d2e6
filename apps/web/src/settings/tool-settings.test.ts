import { describe, expect, it } from 'vitest';
import { defaultToolSettings, parseToolSettings, toRunOptions } from './tool-settings';

describe('parseToolSettings', () => {
  it('drops the confirmation setting this browser used to keep for every chat', () => {
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
});

describe('toRunOptions', () => {
  it('turns the settings into chat.stream options', () => {
    expect(toRunOptions({ ...defaultToolSettings, decisionTimeoutSeconds: 90 }, ['terminal'])).toStrictEqual({
      maxToolCalls: 25,
      toolCallTimeoutMs: 300_000,
      decisionTimeoutMs: 90_000,
    });
  });

  it('lists the enabled tools only when some are turned off', () => {
    const settings = { ...defaultToolSettings, disabledTools: ['terminal'], decisionTimeoutSeconds: 'never' as const };
    expect(toRunOptions(settings, ['terminal', 'python'])).toMatchObject({ enabledTools: ['python'], decisionTimeoutMs: 'never' });
  });

  it('offers no tools while the tool list is unknown and some are turned off', () => {
    expect(toRunOptions({ ...defaultToolSettings, disabledTools: ['terminal'] }, undefined).enabledTools).toStrictEqual([]);
  });
});
