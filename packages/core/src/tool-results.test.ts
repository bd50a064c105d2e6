import { describe, expect, it } from 'vitest';
import { toolResultText } from './tool-results';

describe('toolResultText.deniedByRule', () => {
  it("gives the rule no more authority than its sentence states: a workspace file's rule is not the person's word", () => {
    const fromFile =
      "Denied by a rule. Deny commands starting with `git status` in this workspace (from the workspace's .airlock/rules.json): use the project's helper.";
    const told = toolResultText.deniedByRule('terminal', fromFile);
    expect(told).toContain(fromFile);
    expect(told).not.toMatch(/the person set/);
    expect(told).toContain("A rule from the workspace's rules file (.airlock/rules.json) was written into the workspace, not set by the person");
  });
});
