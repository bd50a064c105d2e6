import { useEffect, useId, useState } from 'react';

export interface NumberSettingProps {
  label: string;
  hint?: string;
  value: number;
  min: number;
  max: number;
  disabled?: boolean;
  onChange: (value: number) => void;
}

/** A whole-number field that commits only valid values, so typing through an empty field does not reset it. */
export function NumberSetting({ label, hint, value, min, max, disabled = false, onChange }: NumberSettingProps) {
  const [draft, setDraft] = useState(String(value));
  const hintId = useId();
  useEffect(() => setDraft(String(value)), [value]);
  const parsed = Number(draft);
  const valid = draft.trim() !== '' && Number.isInteger(parsed) && parsed >= min && parsed <= max;
  return (
    <label className="setting">
      <span className="setting-label">{label}</span>
      <input
        type="number"
        inputMode="numeric"
        min={min}
        max={max}
        step={1}
        value={draft}
        disabled={disabled}
        aria-invalid={!valid}
        aria-describedby={hintId}
        onChange={(event) => {
          setDraft(event.target.value);
          const next = Number(event.target.value);
          if (event.target.value.trim() !== '' && Number.isInteger(next) && next >= min && next <= max) onChange(next);
        }}
        onBlur={() => setDraft(String(value))}
      />
      <span id={hintId} className={valid ? 'hint' : 'hint invalid'}>
        {valid ? hint : `A whole number from ${min} to ${max}.`}
      </span>
    </label>
  );
}
