/**
 * The tool as a call was put up (its source and hints, as its tool-start showed them), as JSON: a card rebuilt from
 * the ledger shows these, not the tool as its MCP server lists it now. Null in rows written before.
 */
export const sql = `
ALTER TABLE tool_calls ADD COLUMN shown_tool TEXT;
`;
