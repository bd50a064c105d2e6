import { useEffect, useId, useRef } from 'react';
import type { ConfirmToolCalls } from '../chat/use-confirm-tool-calls';
import type { ToolsList } from '../lib/api-types';
import { ExportLedgerButton } from '../ledger/export-ledger-button';
import { EnabledTools } from './enabled-tools';
import type { NotificationChoiceState } from './notification-choice';
import { NotificationSetting } from './notification-setting';
import { NumberSetting } from './number-setting';
import { settingLimits, type ToolSettings, type ToolSettingsPatch } from './tool-settings';

export interface SettingsDialogProps {
  /** Undefined while they load from the server. */
  settings: ToolSettings | undefined;
  /** Why the last change was not saved, or the settings could not be read. */
  settingsError: string | null;
  tools: ToolsList | undefined;
  onChange: (patch: ToolSettingsPatch) => void;
  /** The open chat's own setting. */
  confirmToolCalls: ConfirmToolCalls;
  /** The open chat's id: `airlock chat --session` continues it in a terminal. */
  sessionId: string;
  /** This browser's own choice, not the server's. */
  notifications: NotificationChoiceState;
  onNotificationsChange: (enabled: boolean) => void;
  onClose: () => void;
}

export function SettingsDialog({ settings, settingsError, tools, onChange, confirmToolCalls, sessionId, notifications, onNotificationsChange, onClose }: SettingsDialogProps) {
  const titleId = useId();
  const panel = useRef<HTMLElement>(null);

  useEffect(() => {
    const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    panel.current?.focus();
    return () => previous?.focus();
  }, []);

  return (
    <div className="dialog-backdrop" onMouseDown={(event) => event.target === event.currentTarget && onClose()}>
      <section
        ref={panel}
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        tabIndex={-1}
        onKeyDown={(event) => event.key === 'Escape' && onClose()}
      >
        <header className="dialog-header">
          <h2 id={titleId}>Settings</h2>
          <button type="button" className="btn-icon" aria-label="Close settings" onClick={onClose}>
            ×
          </button>
        </header>
        <section className="settings-section" aria-labelledby={`${titleId}-tools`}>
          <h3 id={`${titleId}-tools`}>Tools</h3>
          <label className="setting setting-check">
            <input type="checkbox" checked={confirmToolCalls.value === true} disabled={confirmToolCalls.value === undefined} onChange={(event) => confirmToolCalls.set(event.target.checked)} />
            <span className="setting-label">Confirm tool calls</span>
            <span className="hint">
              {confirmToolCalls.value === undefined ? 'Reading this chat’s setting…' : 'Ask before every tool call of this chat runs. Kept with the chat, for every tab.'}
            </span>
          </label>
          {confirmToolCalls.value === false && (
            <p className="banner banner-warn" role="alert">
              Tools now run without asking in this chat, including commands and code on this machine.
            </p>
          )}
          {confirmToolCalls.error !== null && (
            <p className="banner banner-error" role="alert">
              Could not change the setting: {confirmToolCalls.error}
            </p>
          )}
          <p className="muted">The limits and tools below are kept by the Airlock server, for every browser, and applied to the next message you send.</p>
          {settingsError !== null && (
            <p className="banner banner-error" role="alert">
              {settingsError}
            </p>
          )}
          {settings === undefined ? <p className="muted">Loading settings…</p> : <ToolLimits settings={settings} tools={tools} onChange={onChange} />}
        </section>
        <section className="settings-section" aria-labelledby={`${titleId}-terminal`}>
          <h3 id={`${titleId}-terminal`}>This chat in a terminal</h3>
          <p className="muted">
            <code>pnpm airlock chat --session {sessionId}</code> continues it, run from Airlock’s folder and given the start-up link or the token as for any terminal chat.
          </p>
        </section>
        <section className="settings-section" aria-labelledby={`${titleId}-notifications`}>
          <h3 id={`${titleId}-notifications`}>Notifications</h3>
          <NotificationSetting enabled={notifications.enabled === true} kept={notifications.kept} onChange={onNotificationsChange} />
        </section>
        <section className="settings-section" aria-labelledby={`${titleId}-ledger`}>
          <h3 id={`${titleId}-ledger`}>Ledger</h3>
          <ExportLedgerButton />
        </section>
      </section>
    </div>
  );
}

function ToolLimits({ settings, tools, onChange }: { settings: ToolSettings; tools: ToolsList | undefined; onChange: (patch: ToolSettingsPatch) => void }) {
  const never = settings.decisionTimeoutSeconds === 'never';
  return (
    <>
      <NumberSetting
        label="Max tool calls per message"
        value={settings.maxToolCalls}
        {...settingLimits.maxToolCalls}
        onChange={(maxToolCalls) => onChange({ maxToolCalls })}
      />
      <NumberSetting
        label="Tool call timeout (seconds)"
        hint="A call still running after this is stopped."
        value={settings.toolCallTimeoutSeconds}
        {...settingLimits.toolCallTimeoutSeconds}
        onChange={(toolCallTimeoutSeconds) => onChange({ toolCallTimeoutSeconds })}
      />
      <NumberSetting
        label="Decision timeout (seconds)"
        hint="A call nobody decides on in this time does not run."
        value={typeof settings.decisionTimeoutSeconds === 'number' ? settings.decisionTimeoutSeconds : 3600}
        disabled={never}
        {...settingLimits.decisionTimeoutSeconds}
        onChange={(decisionTimeoutSeconds) => onChange({ decisionTimeoutSeconds })}
      />
      <label className="setting setting-check">
        <input type="checkbox" checked={never} onChange={(event) => onChange({ decisionTimeoutSeconds: event.target.checked ? 'never' : 3600 })} />
        <span className="setting-label">Wait for a decision without a time limit</span>
      </label>
      <h4>Enabled tools</h4>
      {tools === undefined ? (
        <p className="muted">Loading tools…</p>
      ) : (
        <EnabledTools tools={tools.tools} servers={tools.servers} disabled={settings.disabledTools} onChange={(disabledTools) => onChange({ disabledTools })} />
      )}
    </>
  );
}
