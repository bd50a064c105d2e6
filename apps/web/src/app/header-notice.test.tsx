import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { HeaderNotice } from './header-notice';

afterEach(cleanup);

it("shows the label, and the server's whole warning as its title with hidden characters as codes", () => {
  const warning = 'the model server at http://127.0.0.1:8080/v1 does not list the model "qwen3:8b"; it lists "llama\u202E3". Requests name "qwen3:8b" all the same.';
  render(<HeaderNotice label="Model not confirmed by its server" warning={warning} />);
  const notice = screen.getByRole('status');
  expect(notice.textContent).toBe('Model not confirmed by its server');
  expect(notice.getAttribute('title')).toBe(warning.replace('\u202E', '\\u{202E}'));
  expect(notice.getAttribute('aria-description')).toBe(warning.replace('\u202E', '\\u{202E}'));
});

it('keeps a warning without hidden characters as written', () => {
  const warning = "The workspace /home/me is your home folder: a call allowed there can change your shell's start-up files";
  render(<HeaderNotice label="The workspace holds your home folder" warning={warning} />);
  expect(screen.getByRole('status').getAttribute('title')).toBe(warning);
});

it('shows nothing while the server has no such warning', () => {
  const { container } = render(<HeaderNotice label="Tools run without a sandbox" warning={undefined} />);
  expect(container.innerHTML).toBe('');
});
