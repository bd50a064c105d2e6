import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { ModelWarning } from './model-warning';

afterEach(cleanup);

it("shows the server's warning that its model server does not list the model, the whole of it as the title, hidden characters as codes", () => {
  const warning = 'the model server at http://127.0.0.1:8080/v1 does not list the model "qwen3:8b"; it lists "llama\u202E3". Requests name "qwen3:8b" all the same.';
  render(<ModelWarning warning={warning} />);
  const notice = screen.getByRole('status');
  expect(notice.textContent).toBe('Model not confirmed by its server');
  expect(notice.getAttribute('title')).toBe(warning.replace('\u202E', '\\u{202E}'));
});

it('shows nothing when the model server lists the model', () => {
  const { container } = render(<ModelWarning warning={undefined} />);
  expect(container.innerHTML).toBe('');
});
