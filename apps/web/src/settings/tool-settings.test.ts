import { describe, expect, it } from 'vitest';
import { defaultToolSettings, toRunOptions } from './tool-settings';

const named = (...names: string[]) => names.map((name) => ({ name }));

describe('toRunOptions', () => {
  it('turns the settings into chat.stream options', () => {
    expect(toRunOptions({ ...defaultToolSettings, decisionTimeoutSeconds: 90 }, named('terminal'))).toStrictEqual({
      maxToolCalls: 25,
      toolCallTimeoutMs: 300_000,
      decisionTimeoutMs: 90_000,
    });
  });

  it('lists the enabled tools only when some are turned off', () => {
    const settings = { ...defaultToolSettings, disabledTools: ['terminal'], decisionTimeoutSeconds: 'never' as const };
    expect(toRunOptions(settings, named('terminal', 'python'))).toMatchObject({ enabledTools: ['python'], decisionTimeoutMs: 'never' });
  });

  it('keeps off each tool a name turned off may mean now, and no other', () => {
    // `a__b__c` was server a's tool `b__c`; with a server `a__b` offering `c` both are hashed.
    const tools = [
      { name: 'a__b__c_11111111', otherNames: ['a__b__c', 'a__b__c_22222222'] },
      { name: 'a__b__c_33333333', otherNames: ['a__b__c', 'a__b__c_44444444'] },
      { name: 'solo__x', otherNames: ['solo__x_55555555'] },
      { name: 'other__c', otherNames: ['other__c_66666666'] },
    ];
    const settings = { ...defaultToolSettings, disabledTools: ['a__b__c', 'solo__x_55555555'] };
    expect(toRunOptions(settings, tools).enabledTools).toStrictEqual(['other__c']);
  });

  it('leaves the tools to the server while its tool list is unknown: it offers no run a tool turned off there', () => {
    expect(toRunOptions({ ...defaultToolSettings, disabledTools: ['terminal'] }, undefined)).toStrictEqual({
      maxToolCalls: 25,
      toolCallTimeoutMs: 300_000,
      decisionTimeoutMs: 3_600_000,
    });
  });

  it('sends nothing while the settings are not loaded from the server, whose saved ones then hold: a message sent at once is offered the tools', () => {
    expect(toRunOptions(undefined, named('terminal', 'python'))).toStrictEqual({});
    expect(toRunOptions(undefined, undefined)).toStrictEqual({});
  });
});
