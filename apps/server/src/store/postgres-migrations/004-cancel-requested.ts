/**
 * A Stop asked for on one instance while the run's owner could not hear it (it had died): kept with the run, so the
 * instance that takes the run over ends it rather than carrying on.
 */
export const sql = `
ALTER TABLE runs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
`;
