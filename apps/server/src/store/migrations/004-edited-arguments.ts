/** What the person edited a call's arguments to before allowing it; `arguments` keeps what the model proposed. */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN edited_arguments TEXT;
`;
