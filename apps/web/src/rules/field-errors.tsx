import type { ServerErrors } from './server-errors';

/** The server's complaints about one field of the rule, under that field. */
export function FieldErrors({ errors, field }: { errors: ServerErrors | null; field: string }) {
  const messages = errors?.fields.get(field);
  if (messages === undefined) return null;
  return (
    <ul className="field-errors" aria-live="polite" aria-label={`Problems with ${field}`}>
      {messages.map((message) => (
        <li key={message}>{message}</li>
      ))}
    </ul>
  );
}
