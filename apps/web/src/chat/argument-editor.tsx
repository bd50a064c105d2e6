import { declaredDefaults, toVisibleProse, toVisibleText, unshownDefaultsNote, visibleTextString, type DeclaredArguments } from '@airlock/core';
import { useEffect, useId, useMemo, useRef, useState, type FormEvent } from 'react';
import type { ToolArguments as Args } from '../lib/api-types';
import { SteadyButton, type UnsteadyReason } from '../lib/steady-button';
import {
  argumentsFromFields,
  argumentsFromJson,
  checkArguments,
  fieldValues,
  formFields,
  isSameCall,
  type ArgumentIssue,
  type FieldValues,
  type FormField,
  type JsonSchema,
} from './argument-form';
import { EDIT_REFUSED_HINT, UnsteadyClickHint } from './decision-controls';
import { ToolArguments, VisibleTextView } from './tool-arguments';
import type { DraftInput, EditDraft } from './waiting-drafts';

export interface ArgumentEditorProps {
  toolName: string;
  /** The tool's JSON Schema from tools.list; undefined when the server no longer lists the tool (raw JSON only). */
  schema: JsonSchema | undefined;
  /** What the call's tool declared when it was put up, which "Will run with" marks names against. Default undefined: `schema`. */
  declared?: DeclaredArguments | undefined;
  /** The arguments the model proposed. */
  proposed: Args;
  /** While a decision is being sent. */
  busy: boolean;
  /** Why the server refused the last edit, shown in the editor. */
  serverError: string | null;
  /** What an "Always allow" of the edited call would cover, in words. */
  alwaysScope: string;
  /**
   * The tick that asks for it, in words: "the edited call", or, for a tool whose grants cover any call (read_file,
   * list_directory), any call of it, the proposal edited away from too. Default "Also always allow the edited call.".
   */
  alwaysLabel?: string;
  onAllow: (args: Args, always: boolean) => void;
  onCancel: () => void;
  /** Told whether the editor holds a change (it shows "Will run with" something else, or what it holds does not parse). */
  onHeldChange?: (held: boolean) => void;
  /** An edit kept from before (a reload, the card shown again): the editor opens with it. Give one only if `draftFits`. */
  draft?: EditDraft | undefined;
  /** Told what the editor holds as it changes, to keep as a draft; null when it holds no change. */
  onDraftChange?: (draft: EditDraft | null) => void;
}

type Mode = 'form' | 'raw';

/**
 * Changes a waiting call's arguments before allowing it: a form from the tool's JSON Schema, or the raw JSON, checked
 * against the schema as the person types. Below it, the edited call exactly as it will run, under the card's display
 * rules (hidden characters marked). Always allow needs one more tick, and then covers the edited call (or, for a tool whose grants cover any call, says that it covers any). Only its
 * Allow edited button allows, a `SteadyButton` like every decision button: Enter in a field does nothing, since the
 * field may have taken the rest of a message typed on the card.
 */
export function ArgumentEditor({ toolName, schema, declared, proposed, busy, serverError, alwaysScope, alwaysLabel = 'Also always allow the edited call.', onAllow, onCancel, onHeldChange, draft, onDraftChange }: ArgumentEditorProps) {
  const [start] = useState(() => startFrom(schema, proposed, draft));
  /** The arguments the form's fields were made from: the proposal, or the JSON last turned back into the form. */
  const [fieldsFrom, setFieldsFrom] = useState(start.fieldsFrom);
  const [fields, setFields] = useState(start.fields);
  const [mode, setMode] = useState<Mode>(start.mode);
  const [values, setValues] = useState(start.values);
  const [raw, setRaw] = useState(start.raw);
  const [switchError, setSwitchError] = useState<string | null>(null);
  const [always, setAlways] = useState(false);
  const [ignoredClick, setIgnoredClick] = useState<UnsteadyReason | null>(null);
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  // Opened from the card's Edit button or its `e` key: typing goes straight into the first argument.
  // Opened by the person, the editor takes the focus; opened with a kept edit as the card shows (or as the tool list
  // answers), it takes none: the person may be typing in the message box, and the rest would change what runs.
  const [openedWithDraft] = useState(draft !== undefined);
  useEffect(() => {
    if (!openedWithDraft) form.current?.querySelector<HTMLElement>('input, textarea, select')?.focus();
  }, [openedWithDraft]);

  const read = useMemo(() => {
    if (mode === 'form' && fields !== null) {
      const { args, errors } = argumentsFromFields(fields, values, proposed);
      return { args: errors.size === 0 ? args : null, inputErrors: errors, jsonError: null };
    }
    const parsed = argumentsFromJson(raw);
    return { args: parsed.ok ? parsed.args : null, inputErrors: new Map<string, string>(), jsonError: parsed.ok ? null : parsed.error };
  }, [mode, fields, values, raw, proposed]);
  const issues = useMemo(() => (read.args === null ? [] : checkArguments(schema, read.args)), [read.args, schema]);
  // The card's note speaks of the proposal: an edit can give a value under a part of the schema whose defaults are not
  // read (a pattern's or additionalProperties' schema, a union left open), and the tool may fill one in unseen.
  const unshown = useMemo(() => (read.args === null || schema === undefined ? [] : declaredDefaults(schema, read.args).unshown), [read.args, schema]);
  const unchanged = read.args !== null && isSameCall(read.args, proposed);
  const ready = read.args !== null && issues.length === 0 && !unchanged;
  const held = !unchanged;
  useEffect(() => onHeldChange?.(held), [held]);
  // Worked out once per set of fields, not on each key: the arguments can be large (a file's whole content).
  const fieldsFromProposal = useMemo(() => isSameCall(fieldsFrom, proposed), [fieldsFrom, proposed]);
  const fieldsFromValues = useMemo(() => (fields === null ? new Map<string, string | boolean>() : fieldValues(fields, fieldsFrom)), [fields, fieldsFrom]);
  useEffect(() => {
    if (onDraftChange === undefined) return;
    if (!held) onDraftChange(null);
    else if (mode === 'raw' || fields === null) onDraftChange({ mode: 'raw', text: raw });
    else onDraftChange({ mode: 'form', ...(fieldsFromProposal ? {} : { fieldsFrom }), values: draftInputs(fields, values, fieldsFromValues) });
  }, [held, mode, fields, fieldsFrom, fieldsFromProposal, fieldsFromValues, values, raw]);

  const allow = () => {
    setIgnoredClick(null);
    if (ready && !busy) onAllow(read.args!, always);
  };
  // Enter in a one-line field submits the form: it allows nothing.
  const submit = (event: FormEvent) => event.preventDefault();

  const toRaw = () => {
    const current = read.args ?? (fields === null ? proposed : argumentsFromFields(fields, values, proposed).args);
    setRaw(JSON.stringify(current, null, 2));
    setSwitchError(null);
    setMode('raw');
  };
  const toForm = () => {
    const parsed = argumentsFromJson(raw);
    if (!parsed.ok) {
      setSwitchError(`Fix the JSON to go back to the form. ${parsed.error}`);
      return;
    }
    const next = formFields(schema, parsed.args);
    if (next === null) return;
    setFieldsFrom(parsed.args);
    setFields(next);
    setValues(fieldValues(next, parsed.args));
    setSwitchError(null);
    setMode('form');
  };

  const setValue = (name: string, value: string | boolean) => setValues((previous) => new Map(previous).set(name, value));
  const general = issues.filter((issue) => mode === 'raw' || issue.field === '' || !fields?.some((field) => field.name === issue.field));

  return (
    <form ref={form} className="argument-editor" aria-label={`Edit the arguments of ${toolName}`} onSubmit={submit} noValidate>
      <div className="argument-editor-head">
        <span className="field-label">Edit the arguments, then allow the edited call</span>
        {fields !== null && (
          <button type="button" className="btn btn-small" aria-pressed={mode === 'raw'} onClick={mode === 'raw' ? toForm : toRaw} disabled={busy}>
            {mode === 'raw' ? 'Form' : 'Raw JSON'}
          </button>
        )}
      </div>
      {mode === 'form' && fields !== null ? (
        <div className="argument-fields">
          {fields.map((field, index) => (
            <FieldInput
              key={field.name}
              id={`${id}-field-${index}`}
              field={field}
              value={values.get(field.name) ?? ''}
              problem={read.inputErrors.get(field.name) ?? issuesText(issues.filter((issue) => issue.field === field.name))}
              disabled={busy}
              onChange={(value) => setValue(field.name, value)}
            />
          ))}
        </div>
      ) : (
        <label className="argument-field">
          <span className="argument-field-name">Arguments as JSON</span>
          <textarea
            className="argument-json"
            value={raw}
            rows={Math.min(16, Math.max(4, raw.split('\n').length + 1))}
            spellCheck={false}
            aria-invalid={read.jsonError !== null || issues.length > 0}
            aria-describedby={`${id}-raw-problem`}
            disabled={busy}
            onChange={(event) => setRaw(event.target.value)}
          />
          <span id={`${id}-raw-problem`} className="field-error" aria-live="polite">
            {read.jsonError ?? ''}
          </span>
        </label>
      )}
      {switchError !== null && (
        <p className="field-error" role="alert">
          {switchError}
        </p>
      )}
      {general.length > 0 && (
        <ul className="field-error argument-issues" aria-label="Problems with the arguments">
          {general.map((issue, index) => (
            <li key={index}>
              <VisibleTextView text={toVisibleText(`${[issue.field, issue.path].filter((part) => part !== '').join('.') || 'arguments'}: ${issue.message}`)} />
            </li>
          ))}
        </ul>
      )}
      {serverError !== null && (
        <p className="problem" role="alert">
          The server refused the edited arguments: <VisibleTextView text={toVisibleText(serverError)} />. {EDIT_REFUSED_HINT}
        </p>
      )}
      {read.args !== null && !unchanged && (
        <div className="argument-preview" role="group" aria-label="The edited call as it will run">
          <div className="field-label">Will run with</div>
          <ToolArguments toolName={toolName} args={read.args} declared={declared} inputSchema={schema} />
          {unshown.length > 0 && (
            <p className="unshown-defaults-warning" role="note">
              {unshownDefaultsNote(unshown)}
            </p>
          )}
        </div>
      )}
      {unchanged && <p className="detail">No change yet: edit an argument, or use Allow above to run the call as proposed.</p>}
      <label className="argument-always">
        <input type="checkbox" checked={always} disabled={busy} onChange={(event) => setAlways(event.target.checked)} />
        <span>
          {alwaysLabel} <span className="muted">{alwaysScope}</span>
        </span>
      </label>
      <div className="decision-buttons">
        <SteadyButton className="btn btn-allow" disabled={!ready || busy} onClick={allow} onUnsteadyClick={setIgnoredClick}>
          {always ? 'Always allow edited' : 'Allow edited'}
        </SteadyButton>
        <button type="button" className="btn" onClick={onCancel} disabled={busy}>
          Cancel editing
        </button>
      </div>
      {ignoredClick !== null && !busy && <UnsteadyClickHint reason={ignoredClick} />}
    </form>
  );
}

/**
 * Whether the editor can open with `draft` now: a form's draft needs the form, so the tool's schema (tools.list may
 * answer after the card shows, and a tool its server stopped listing has none). Until then the draft is only kept.
 */
export function draftFits(schema: JsonSchema | undefined, proposed: Args, draft: EditDraft): boolean {
  return draft.mode === 'raw' || formFields(schema, draft.fieldsFrom ?? proposed) !== null;
}

/** The editor's first state: the proposal, or the kept draft where it still fits the form. */
function startFrom(schema: JsonSchema | undefined, proposed: Args, draft: EditDraft | undefined) {
  const raw = JSON.stringify(proposed, null, 2);
  if (draft?.mode === 'raw') {
    const fields = formFields(schema, proposed);
    return { fieldsFrom: proposed, fields, mode: 'raw' as Mode, values: fields === null ? new Map<string, string | boolean>() : fieldValues(fields, proposed), raw: draft.text };
  }
  const fieldsFrom = draft?.mode === 'form' ? (draft.fieldsFrom ?? proposed) : proposed;
  const fields = formFields(schema, fieldsFrom);
  if (fields === null) return { fieldsFrom: proposed, fields: null, mode: 'raw' as Mode, values: new Map<string, string | boolean>(), raw };
  const values = fieldValues(fields, fieldsFrom);
  const byName = new Map(fields.map((field) => [field.name, field]));
  for (const [name, input] of draft?.mode === 'form' ? draft.values : []) {
    const field = byName.get(name);
    const value = field === undefined ? undefined : inputFromDraft(field, input);
    if (value !== undefined) values.set(name, value);
  }
  return { fieldsFrom, fields, mode: 'form' as Mode, values, raw };
}

/** The inputs that differ from what the fields were made from, as kept: a choice by its option's value. */
function draftInputs(fields: readonly FormField[], values: FieldValues, from: FieldValues): [string, DraftInput][] {
  const inputs: [string, DraftInput][] = [];
  for (const field of fields) {
    const value = values.get(field.name);
    if (value === undefined || value === from.get(field.name)) continue;
    const index = field.kind === 'choice' && value !== '' ? Number(value) : -1;
    inputs.push([field.name, index >= 0 && index < field.options.length ? { option: field.options[index]! } : value]);
  }
  return inputs;
}

/**
 * What a kept input gives the field now; undefined when it no longer fits it (the tool's schema changed since: the
 * field keeps what the arguments give it). A choice is found by value, wherever its option now is in the list.
 */
function inputFromDraft(field: FormField, input: DraftInput): string | boolean | undefined {
  if (field.kind === 'choice') {
    if (input === '') return '';
    if (typeof input !== 'object') return undefined;
    const index = field.options.findIndex((option) => option === input.option);
    return index >= 0 ? String(index) : undefined;
  }
  if (field.kind === 'boolean') return typeof input === 'boolean' ? input : undefined;
  return typeof input === 'string' ? input : undefined;
}

function issuesText(issues: readonly ArgumentIssue[]): string | undefined {
  if (issues.length === 0) return undefined;
  return issues.map((issue) => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`)).join(' ');
}

interface FieldInputProps {
  id: string;
  field: FormField;
  value: string | boolean;
  problem: string | undefined;
  disabled: boolean;
  onChange: (value: string | boolean) => void;
}

function FieldInput({ id, field, value, problem, disabled, onChange }: FieldInputProps) {
  const text = typeof value === 'string' ? value : '';
  const described = [field.description === null ? null : `${id}-about`, problem === undefined ? null : `${id}-problem`].filter((part) => part !== null).join(' ');
  const common = { id, disabled, 'aria-invalid': problem !== undefined, ...(described === '' ? {} : { 'aria-describedby': described }) };
  const control = (() => {
    switch (field.kind) {
      case 'text':
        return <input {...common} type="text" value={text} spellCheck={false} onChange={(event) => onChange(event.target.value)} />;
      case 'multiline':
      case 'json':
        return (
          <textarea
            {...common}
            className={field.kind === 'json' ? 'argument-json' : undefined}
            value={text}
            rows={Math.min(12, Math.max(field.kind === 'json' ? 3 : 2, text.split('\n').length + 1))}
            spellCheck={false}
            onChange={(event) => onChange(event.target.value)}
          />
        );
      case 'number':
      case 'integer':
        return <input {...common} type="number" step={field.kind === 'integer' ? 1 : 'any'} value={text} onChange={(event) => onChange(event.target.value)} />;
      case 'boolean':
        return <input {...common} type="checkbox" checked={value === true} onChange={(event) => onChange(event.target.checked)} />;
      case 'choice':
        return (
          <select {...common} value={text} onChange={(event) => onChange(event.target.value)}>
            {!field.required && <option value="">(none)</option>}
            {field.options.map((option, index) => (
              <option key={index} value={String(index)}>
                {visibleTextString(toVisibleText(typeof option === 'string' ? option : JSON.stringify(option), { singleLine: true }))}
              </option>
            ))}
          </select>
        );
    }
  })();
  return (
    <div className={`argument-field argument-field-${field.kind}`}>
      <label htmlFor={id} className="argument-field-name">
        <VisibleTextView text={toVisibleText(field.name, { singleLine: true })} />
        {field.kind === 'json' && <span className="muted"> (JSON)</span>}
        {field.required && <span className="muted"> · required</span>}
      </label>
      {control}
      {field.description !== null && (
        <span id={`${id}-about`} className="argument-field-about">
          <VisibleTextView text={toVisibleProse(field.description)} />
        </span>
      )}
      {problem !== undefined && (
        <span id={`${id}-problem`} className="field-error" aria-live="polite">
          <VisibleTextView text={toVisibleText(problem)} />
        </span>
      )}
    </div>
  );
}
