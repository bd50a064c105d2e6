export { ScriptedModel, textStep, toolCallStep, hangingStep, type ScriptStep } from './scripted-model';
export { collectRun, type CollectedRun } from './collect-run';
