/**
 * When a run was last given up by an instance that could not keep it (its writes failed, or its resume), and how long
 * every instance then holds off claiming it: kept with the run, so a third instance holds off too, and no write of the
 * run resets it.
 */
export const sql = `
ALTER TABLE runs ADD COLUMN given_up_at bigint;
ALTER TABLE runs ADD COLUMN hold_off_ms bigint;
`;
