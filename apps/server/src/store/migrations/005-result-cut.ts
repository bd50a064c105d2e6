/**
 * What was left out of a call's result before the model saw it (bytes of a command's output, characters cut by the
 * loop), as its tool-end reported it. Null in rows written before: those show no note that the result was shortened.
 */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN cut_bytes INTEGER;
ALTER TABLE tool_calls ADD COLUMN cut_characters INTEGER;
`;
