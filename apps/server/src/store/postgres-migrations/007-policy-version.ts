/**
 * One version for what lets a call run without asking that instances keep in memory: raised by every change to the
 * lasting rules (not their hit counts) and to the settings (a workspace's trust of its rules file among them), by
 * whichever instance or tool makes it. The write of a call let through unasked checks it (and, itself, the grant or
 * the chat's confirmation it relied on), so a change another instance has not heard of yet cannot let it run.
 */
export const sql = `
CREATE TABLE policy_version (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  version bigint NOT NULL
);
INSERT INTO policy_version (version) VALUES (1);
CREATE FUNCTION raise_policy_version() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE policy_version SET version = version + 1;
  RETURN NULL;
END
$$;
CREATE TRIGGER rules_added_or_removed AFTER INSERT OR DELETE ON rules FOR EACH ROW EXECUTE FUNCTION raise_policy_version();
CREATE TRIGGER rules_changed AFTER UPDATE ON rules FOR EACH ROW
  WHEN ((OLD.scope_kind, OLD.scope_value, OLD.json) IS DISTINCT FROM (NEW.scope_kind, NEW.scope_value, NEW.json)) EXECUTE FUNCTION raise_policy_version();
CREATE TRIGGER settings_added_or_removed AFTER INSERT OR DELETE ON settings FOR EACH ROW EXECUTE FUNCTION raise_policy_version();
CREATE TRIGGER settings_changed AFTER UPDATE ON settings FOR EACH ROW WHEN (OLD.value IS DISTINCT FROM NEW.value) EXECUTE FUNCTION raise_policy_version();
`;
