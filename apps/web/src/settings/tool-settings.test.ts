import { describe, expect, it } from 'vitest';
import { defaultToolSettings, toRunOptions } from './tool-settings';

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

  it('offers no tools while the settings are not loaded from the server', () => {
    expect(toRunOptions(undefined, ['terminal', 'python'])).toStrictEqual({
      maxToolCalls: 25,
      toolCallTimeoutMs: 300_000,
      decisionTimeoutMs: 3_600_000,
      enabledTools: [],
    });
  });
});
