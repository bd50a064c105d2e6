/**
 * A person stopped the run while it was paused (its store could not take writes): whoever takes it up, this process
 * or the next start, ends it as cancelled before anything more of it runs.
 */
export const sql = `
ALTER TABLE runs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
`;
