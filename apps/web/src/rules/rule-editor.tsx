import { useId, useState, type FormEvent } from 'react';
import { proseText } from '../chat/prose-text';
import { trpc } from '../lib/trpc';
import { FieldErrors } from './field-errors';
import { MATCH_LABELS, PATH_TOOLS, TOOL_OF_MATCH, draftOfForm, type RuleForm } from './rule-form';
import { RulePreview } from './rule-preview';
import type { RuleMatchKind, RuleScopeKind } from './rule-types';
import { serverErrorsOf, type ServerErrors } from './server-errors';
import { useDebounced } from './use-debounced';
import { useSessionPages } from '../sessions/use-session-pages';
import { useChatTitle } from './use-chat-title';

const PREVIEW_DELAY_MS = 300;

export interface RuleEditorProps {
  initial: RuleForm;
  /** The rule being edited; undefined when adding one. */
  ruleId?: string;
  /** The server's workspace folder, for rules scoped to it. */
  workspace: string | undefined;
  onDone: () => void;
}

/** Adds or edits one of the person's rules, with a live preview of the past calls it would have decided. */
export function RuleEditor({ initial, ruleId, workspace, onDone }: RuleEditorProps) {
  const utils = trpc.useUtils();
  // A page of chats at a time, as the chat list reads them (shared with it), and more on demand.
  const sessions = useSessionPages(0);
  const [form, setForm] = useState(initial);
  // The rule's chat, older than the chats loaded: offered under its own title, read on its own.
  const pickedOlder = form.sessionId !== '' && sessions.sessions !== undefined && !sessions.sessions.some((session) => session.sessionId === form.sessionId);
  const pickedTitle = useChatTitle(form.scopeKind === 'chat' && form.sessionId !== '' ? form.sessionId : undefined, sessions.sessions);
  const [previewErrors, setPreviewErrors] = useState<ServerErrors | null>(null);
  const onSaved = async () => {
    await utils.rules.list.invalidate();
    onDone();
  };
  const add = trpc.rules.add.useMutation({ onSuccess: onSaved });
  const update = trpc.rules.update.useMutation({ onSuccess: onSaved });
  const saving = add.isPending || update.isPending;
  const saveErrors = serverErrorsOf(add.error ?? update.error);
  const errors = saveErrors ?? previewErrors;
  const result = draftOfForm(form, workspace);
  const previewDraft = useDebounced(result.ok ? result.draft : null, PREVIEW_DELAY_MS);
  const formId = useId();
  const set = (patch: Partial<RuleForm>) => {
    add.reset();
    update.reset();
    setForm((current) => ({ ...current, ...patch }));
  };
  const setKind = (matchKind: RuleMatchKind) => set({ matchKind, tool: TOOL_OF_MATCH[matchKind] ?? (form.tool === 'mcp' ? '' : form.tool) });

  const save = (event: FormEvent) => {
    event.preventDefault();
    if (!result.ok || saving) return;
    if (ruleId === undefined) add.mutate(result.draft);
    else update.mutate({ ruleId, draft: result.draft });
  };

  return (
    <form className="rule-editor" aria-label={ruleId === undefined ? 'New rule' : 'Edit rule'} onSubmit={save}>
      <fieldset className="rule-effect">
        <legend>Effect</legend>
        {(['allow', 'deny'] as const).map((effect) => (
          <label key={effect}>
            <input type="radio" name={`${formId}-effect`} checked={form.effect === effect} onChange={() => set({ effect })} />
            {effect === 'allow' ? 'Allow' : 'Deny'}
          </label>
        ))}
        <FieldErrors errors={errors} field="effect" />
      </fieldset>
      <label>
        <span>Applies to</span>
        <select value={form.matchKind} onChange={(event) => setKind(event.target.value as RuleMatchKind)}>
          {Object.entries(MATCH_LABELS).map(([kind, label]) => (
            <option key={kind} value={kind}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <ToolField form={form} set={set} />
      <FieldErrors errors={errors} field="tool" />
      <MatchFields form={form} set={set} />
      <FieldErrors errors={errors} field="match" />
      <label>
        <span>Where</span>
        <select value={form.scopeKind} onChange={(event) => set({ scopeKind: event.target.value as RuleScopeKind })}>
          <option value="workspace">In this workspace</option>
          <option value="global">Everywhere</option>
          <option value="chat">In one chat</option>
        </select>
      </label>
      {form.scopeKind === 'chat' && (
        <label>
          <span>Chat</span>
          <select value={form.sessionId} onChange={(event) => set({ sessionId: event.target.value })}>
            <option value="">Pick a chat…</option>
            {pickedOlder && <option value={form.sessionId}>{pickedTitle ?? 'The chat of this rule'}</option>}
            {(sessions.sessions ?? []).map((session) => (
              <option key={session.sessionId} value={session.sessionId}>
                {proseText(session.title)}
              </option>
            ))}
          </select>
        </label>
      )}
      {form.scopeKind === 'chat' && sessions.hasMore && (
        <button type="button" className="btn btn-small" disabled={sessions.loadingMore} onClick={sessions.showMore}>
          Show more chats
        </button>
      )}
      <FieldErrors errors={errors} field="scope" />
      <label>
        <span>Reason (told to the model when it denies)</span>
        <input type="text" value={form.reason} maxLength={1000} onChange={(event) => set({ reason: event.target.value })} />
      </label>
      <FieldErrors errors={errors} field="reason" />
      {!result.ok && <p className="problem">{result.problem}</p>}
      <RulePreview draft={previewDraft} onErrors={setPreviewErrors} />
      {saveErrors !== null && (
        <p className="problem" role="alert">
          Not saved: {saveErrors.message}
        </p>
      )}
      <div className="rule-editor-actions">
        <button type="submit" className="btn btn-primary" disabled={!result.ok || saving}>
          {ruleId === undefined ? 'Add rule' : 'Save rule'}
        </button>
        <button type="button" className="btn" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface FieldsProps {
  form: RuleForm;
  set: (patch: Partial<RuleForm>) => void;
}

function ToolField({ form, set }: FieldsProps) {
  if (form.matchKind === 'path-glob') {
    return (
      <label>
        <span>Tool</span>
        <select value={form.tool} onChange={(event) => set({ tool: event.target.value })}>
          {PATH_TOOLS.map((tool) => (
            <option key={tool} value={tool}>
              {tool}
            </option>
          ))}
        </select>
      </label>
    );
  }
  if (form.matchKind === 'exact-arguments') {
    return (
      <label>
        <span>Tool</span>
        <input type="text" value={form.tool} onChange={(event) => set({ tool: event.target.value })} />
      </label>
    );
  }
  return null;
}

function MatchFields({ form, set }: FieldsProps) {
  switch (form.matchKind) {
    case 'command-prefix':
      return (
        <>
          <label>
            <span>Command</span>
            <input type="text" value={form.command} placeholder="npm test" spellCheck={false} onChange={(event) => set({ command: event.target.value })} />
          </label>
          <label className="checkbox">
            <input type="checkbox" checked={form.exact} onChange={(event) => set({ exact: event.target.checked })} />
            Exactly this command, with no further arguments
          </label>
        </>
      );
    case 'path-glob':
      return (
        <label>
          <span>Path glob, relative to the workspace</span>
          <input type="text" value={form.glob} placeholder="src/**" spellCheck={false} onChange={(event) => set({ glob: event.target.value })} />
        </label>
      );
    case 'host':
      return (
        <label>
          <span>Host</span>
          <input type="text" value={form.host} placeholder="example.com or *.example.com" spellCheck={false} onChange={(event) => set({ host: event.target.value })} />
        </label>
      );
    case 'mcp-tool':
      return (
        <>
          <label>
            <span>MCP server</span>
            <input type="text" value={form.server} onChange={(event) => set({ server: event.target.value })} />
          </label>
          <label>
            <span>MCP tool</span>
            <input type="text" value={form.mcpTool} onChange={(event) => set({ mcpTool: event.target.value })} />
          </label>
        </>
      );
    case 'mcp-server':
      return (
        <label>
          <span>MCP server</span>
          <input type="text" value={form.server} onChange={(event) => set({ server: event.target.value })} />
        </label>
      );
    case 'exact-arguments':
      return (
        <label>
          <span>Arguments (JSON)</span>
          <textarea rows={4} value={form.argumentsJson} spellCheck={false} onChange={(event) => set({ argumentsJson: event.target.value })} />
        </label>
      );
  }
}
