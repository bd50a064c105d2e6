import { ModelError, type ModelPart } from '@airlock/core';
import { expect } from 'vitest';

/** Reads `stream` until it fails, pushing each part it gave before to `parts`; answers the ModelError it failed with. */
export async function failure(stream: AsyncIterable<ModelPart>, parts: ModelPart[] = []): Promise<ModelError> {
  try {
    for await (const part of stream) parts.push(part);
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    return error as ModelError;
  }
  throw new Error('the stream did not fail');
}
