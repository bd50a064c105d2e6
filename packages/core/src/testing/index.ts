export { ScriptedModel, textStep, toolCallStep, hangingStep, type ScriptStep } from './scripted-model';
export { collectRun, type CollectedRun } from './collect-run';
export { deferred, type Deferred } from './deferred';
export { parkingRun } from './parking-run';
export { mcpReadTool } from './mcp-read-tool';
export { makeWaitsPatient, PATIENT_WAIT_MS } from './patient-waits';
