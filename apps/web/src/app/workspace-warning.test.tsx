import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { WorkspaceWarning } from './workspace-warning';

afterEach(cleanup);

it('shows the server’s warning about a workspace that holds the home folder, the whole of it as the title', () => {
  const warning = "The workspace /home/me is your home folder: a call allowed there can change your shell's start-up files";
  render(<WorkspaceWarning warning={warning} />);
  const notice = screen.getByRole('status');
  expect(notice.textContent).toBe('The workspace holds your home folder');
  expect(notice.getAttribute('title')).toBe(warning);
});

it('shows nothing when the server has no such warning', () => {
  const { container } = render(<WorkspaceWarning warning={undefined} />);
  expect(container.innerHTML).toBe('');
});
