import { useState } from 'react';

export interface NotificationSettingProps {
  enabled: boolean;
  onChange: (enabled: boolean) => void;
}

/** Off by default; turning it on asks the browser for permission first. */
export function NotificationSetting({ enabled, onChange }: NotificationSettingProps) {
  const supported = typeof Notification !== 'undefined';
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
        <input type="checkbox" checked={enabled && supported} disabled={!supported} onChange={(event) => void toggle(event.target.checked)} />
        <span className="setting-label">Notify me when a decision is needed</span>
        <span className="hint">
          {supported
            ? 'A system notification, with Allow and Deny where the system offers them, while this tab is in the background. Saved in this browser.'
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
