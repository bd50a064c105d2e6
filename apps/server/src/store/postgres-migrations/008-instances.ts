/**
 * Which process holds each instance id: every process makes an incarnation (a random token) at start and takes its
 * id only while no other live one holds it; runs are owned by an id and an incarnation, so a second process under the
 * same id, or an old one that stalled and came back, can never renew, release or write what the holder owns. A run
 * owned before this version has no incarnation: it belongs to a previous life of its id, given up when the id is next
 * taken.
 */
export const sql = `
CREATE TABLE instances (
  instance_id text PRIMARY KEY,
  incarnation text NOT NULL,
  started_at bigint NOT NULL,
  alive_until bigint NOT NULL
);
ALTER TABLE runs ADD COLUMN owner_incarnation text;
`;
