import { cleanup, render } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { ModelBadge } from './model-badge';

afterEach(cleanup);

it("shows the model server's name for its model with what would reorder or hide it as escapes", () => {
  const { container } = render(<ModelBadge info={{ provider: 'OpenAI-compatible', baseURL: 'http://127.0.0.1:8080/v1', model: 'qwen\u202Eelif\u200B', demo: false }} />);
  expect(container.textContent).toBe('qwen\\u{202E}elif\\u{200B} · OpenAI-compatible');
});
