import type { Migration } from '../migrations';
import { sql as initial } from './001-initial';
import { sql as resultCut } from './002-result-cut';
import { sql as ruleText } from './003-rule-text';
import { sql as cancelRequested } from './004-cancel-requested';
import { sql as messageRun } from './005-message-run';
import { sql as shownTool } from './006-shown-tool';
import { sql as policyVersion } from './007-policy-version';
import { sql as instances } from './008-instances';
import { sql as sessionActivityIndex } from './009-session-activity-index';
import { sql as exactGrantsOnly } from './010-exact-grants-only';
import { sql as askedBecause } from './011-asked-because';
import { sql as handOverHoldOff } from './012-hand-over-hold-off';
import { sql as ruleFromWorkspaceFile } from './013-rule-from-workspace-file';

/** Every schema change of the PostgreSQL store, oldest first. Add a file `NNN-name.ts` and a line here; never edit an applied one. */
export const postgresMigrations: readonly Migration[] = [
  { version: 1, name: 'initial', sql: initial },
  { version: 2, name: 'result-cut', sql: resultCut },
  { version: 3, name: 'rule-text', sql: ruleText },
  { version: 4, name: 'cancel-requested', sql: cancelRequested },
  { version: 5, name: 'message-run', sql: messageRun },
  { version: 6, name: 'shown-tool', sql: shownTool },
  { version: 7, name: 'policy-version', sql: policyVersion },
  { version: 8, name: 'instances', sql: instances },
  { version: 9, name: 'session-activity-index', sql: sessionActivityIndex },
  { version: 10, name: 'exact-grants-only', sql: exactGrantsOnly },
  { version: 11, name: 'asked-because', sql: askedBecause },
  { version: 12, name: 'hand-over-hold-off', sql: handOverHoldOff },
  { version: 13, name: 'rule-from-workspace-file', sql: ruleFromWorkspaceFile },
];

export { migratePostgres, type MigratePostgresOptions } from './migrate';
