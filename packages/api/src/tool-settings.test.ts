import { describe, expect, it } from 'vitest';
import { defaultToolSettings, parseToolSettings, toolSettingsSchema, turnedOffTools, withToolsTurned } from './tool-settings';

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

describe('a tool turned off under a name it no longer has', () => {
  // Server a's `b__c` was `a__b__c` until a server `a__b` offering `c` came: both are hashed now. Server s's `x` was
  // hashed while a server `s__x` was configured, and is plain again.
  const tools = [
    { name: 'a__b__c_11111111', otherNames: ['a__b__c', 'a__b__c_22222222'] },
    { name: 'a__b__c_33333333', otherNames: ['a__b__c', 'a__b__c_44444444'] },
    { name: 's__x', otherNames: ['s__x_55555555'] },
    { name: 'terminal' },
  ];

  it('turns off each tool the name may mean, and a name that is a tool’s own only that tool', () => {
    expect(turnedOffTools(['a__b__c', 's__x_55555555'], tools)).toStrictEqual(new Set(['a__b__c_11111111', 'a__b__c_33333333', 's__x']));
    expect(turnedOffTools(['gone__tool'], tools)).toStrictEqual(new Set());
    // Another name that is another tool's own names that tool alone.
    expect(turnedOffTools(['terminal'], [...tools, { name: 'x__y', otherNames: ['terminal'] }])).toStrictEqual(new Set(['terminal']));
  });

  it('turning one on takes its names out and keeps the other off under its own name; names of tools not offered stay', () => {
    expect(withToolsTurned(['a__b__c', 'gone__tool'], tools, ['a__b__c_11111111'], true)).toStrictEqual(['gone__tool', 'a__b__c_33333333']);
    expect(withToolsTurned(['a__b__c'], tools, ['a__b__c_11111111', 'a__b__c_33333333'], true)).toStrictEqual([]);
    expect(withToolsTurned(['s__x_55555555'], tools, ['s__x'], true)).toStrictEqual([]);
    expect(withToolsTurned(['a__b__c'], tools, ['terminal'], false)).toStrictEqual(['a__b__c', 'terminal']);
    expect(withToolsTurned(['a__b__c'], tools, ['terminal'], true)).toStrictEqual(['a__b__c']);
  });
});
