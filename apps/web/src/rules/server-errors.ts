/** What a failed call says, with the zod field errors the server adds (`error.data.zodError`), by top-level field. */
export interface ServerErrors {
  message: string;
  fields: ReadonlyMap<string, readonly string[]>;
}

interface ErrorWithZod {
  message: string;
  data?: { zodError?: { fieldErrors?: Record<string, string[] | undefined> } | null } | null;
}

export function serverErrorsOf(error: ErrorWithZod | null | undefined): ServerErrors | null {
  if (!error) return null;
  const fieldErrors = error.data?.zodError?.fieldErrors ?? {};
  const fields = new Map<string, readonly string[]>();
  for (const [field, messages] of Object.entries(fieldErrors)) if (messages !== undefined && messages.length > 0) fields.set(field, messages);
  return { message: error.message, fields };
}
