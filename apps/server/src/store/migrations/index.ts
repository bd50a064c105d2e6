import { sql as initial } from './001-initial';
import { sql as rules } from './002-rules';
import { sql as settings } from './003-settings';
import { sql as editedArguments } from './004-edited-arguments';
import { sql as resultCut } from './005-result-cut';
import { sql as ruleText } from './006-rule-text';
import { sql as approvalIndex } from './007-approval-index';
import { sql as messageRun } from './008-message-run';
import { sql as shownTool } from './009-shown-tool';
import { sql as cancelRequested } from './010-cancel-requested';
import { sql as sessionActivityIndex } from './011-session-activity-index';
import { sql as exactGrantsOnly } from './012-exact-grants-only';
import { sql as askedBecause } from './013-asked-because';

export interface Migration {
  /** 1, 2, 3…: applied in this order, each once. */
  version: number;
  name: string;
  sql: string;
}

/** Every schema change, oldest first. Add a file `NNN-name.ts` and a line here; never edit an applied one. */
export const migrations: readonly Migration[] = [
  { version: 1, name: 'initial', sql: initial },
  { version: 2, name: 'rules', sql: rules },
  { version: 3, name: 'settings', sql: settings },
  { version: 4, name: 'edited-arguments', sql: editedArguments },
  { version: 5, name: 'result-cut', sql: resultCut },
  { version: 6, name: 'rule-text', sql: ruleText },
  { version: 7, name: 'approval-index', sql: approvalIndex },
  { version: 8, name: 'message-run', sql: messageRun },
  { version: 9, name: 'shown-tool', sql: shownTool },
  { version: 10, name: 'cancel-requested', sql: cancelRequested },
  { version: 11, name: 'session-activity-index', sql: sessionActivityIndex },
  { version: 12, name: 'exact-grants-only', sql: exactGrantsOnly },
  { version: 13, name: 'asked-because', sql: askedBecause },
];
