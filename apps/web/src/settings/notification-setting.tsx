import { useState } from 'react';

export interface NotificationSettingProps {
  /** This browser's choice. */
  enabled: boolean;
  /** Whether the browser keeps the choice (localStorage), or only this tab does. */
  kept: boolean;
  onChange: (enabled: boolean) => void;
}

/**
 * Off by default; turning it on asks the browser for permission first. Shown on only while the browser allows
 * notifications for this page: a choice taken over from elsewhere shows nothing without that.
 */
export function NotificationSetting({ enabled, kept, onChange }: NotificationSettingProps) {
  const supported = typeof Notification !== 'undefined';
  const allowed = supported && Notification.permission === 'granted';
  const [problem, setProblem] = useState<string | null>(null);
  const toggle = async (next: boolean) => {
    setProblem(null);
    if (!next) return onChange(false);
    const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
    if (permission === 'granted') onChange(true);
    else setProblem('The browser did not allow notifications for this page. Allow them in the site settings, then try again.');
  };
  return (
    <>
      <label className="setting setting-check">
        <input type="checkbox" checked={enabled && allowed} disabled={!supported} onChange={(event) => void toggle(event.target.checked)} />
        <span className="setting-label">Notify me when a decision is needed</span>
        <span className="hint">
          {supported
            ? `A system notification, with Allow and Deny where the system offers them, while this tab is in the background. ${keptWhere(kept)}`
            : 'This browser does not offer notifications.'}
        </span>
      </label>
      {problem !== null && (
        <p className="banner banner-error" role="alert">
          {problem}
        </p>
      )}
    </>
  );
}

function keptWhere(kept: boolean): string {
  if (!kept) return 'Kept by this tab only: the browser keeps no storage for this page.';
  const note = 'Kept by this browser for this address; other browsers and profiles keep their own.';
  // The start-up link names a new *.localhost origin at each start, and storage and permission are per origin.
  return window.location.hostname.endsWith('.localhost') ? `${note} The address is new at each start of Airlock: turn it on again after a restart.` : note;
}
