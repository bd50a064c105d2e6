import { proseText } from '../chat/prose-text';

/**
 * A lasting notice in the header while the server warns of something the person should keep in mind (the model not
 * confirmed by its server, tools run without a sandbox, a workspace holding the home folder). The server's whole
 * warning is its title and description, shown with hidden characters as codes: parts of it (a model's name, a path)
 * come from outside.
 */
export function HeaderNotice({ label, warning }: { label: string; warning: string | undefined }) {
  if (warning === undefined) return null;
  const detail = proseText(warning);
  return (
    <span className="model-badge header-notice" role="status" title={detail} aria-description={detail}>
      {label}
    </span>
  );
}
