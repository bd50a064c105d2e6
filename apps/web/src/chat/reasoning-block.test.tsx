import { cleanup, render } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { ReasoningBlock } from './reasoning-block';

afterEach(cleanup);

it("shows the model's reasoning with characters that hide or reorder text as escapes", () => {
  const { container } = render(<ReasoningBlock text={'I will run \u202Etxt.exe\u202C safely\u200B.'} streaming={false} />);
  expect(container.querySelector('.reasoning-text')?.textContent).toBe('I will run \\u{202E}txt.exe\\u{202C} safely\\u{200B}.');
});
