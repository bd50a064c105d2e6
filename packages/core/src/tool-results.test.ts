import { describe, expect, it } from 'vitest';
import { toolResultText } from './tool-results';

describe('toolResultText.deniedByRule', () => {
  it("gives a workspace file's rule no more authority than it has: its reason is not the person's word", () => {
    const fromFile =
      "Denied by a rule. Deny commands starting with `git status` in this workspace (from the workspace's .airlock/rules.json): use the project's helper.";
    const told = toolResultText.deniedByRule('terminal', fromFile, true);
    expect(told).toContain(fromFile);
    expect(told).not.toMatch(/the person set/);
    expect(told).toContain("This rule comes from the workspace's rules file (.airlock/rules.json): it was written into the workspace, not set by the person");
  });

  it("says nothing of the workspace's file for the person's own rule", () => {
    const told = toolResultText.deniedByRule('terminal', 'Denied by a rule. Deny commands starting with `rm` everywhere: never delete.');
    expect(told).toContain('never delete');
    expect(told).not.toContain('rules file');
  });
});
