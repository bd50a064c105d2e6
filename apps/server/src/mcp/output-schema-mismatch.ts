import type { CallToolResult, Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import { outputValidator } from './output-validator';

const MAX_MISMATCH_CHARS = 500;

/**
 * Why a tool's result does not match the output schema it declares, or undefined when it does (or it declares none).
 * An error result may come without structured content, as the specification has it.
 */
export function outputSchemaMismatch(result: CallToolResult, outputSchema: McpToolDefinition['outputSchema']): string | undefined {
  if (outputSchema === undefined) return undefined;
  if (result.structuredContent === undefined) return result.isError === true ? undefined : 'the tool declares one and sent no structured content';
  const checked = outputValidator.getValidator(outputSchema)(result.structuredContent);
  if (checked.valid) return undefined;
  const why = checked.errorMessage ?? 'it does not match';
  return why.length > MAX_MISMATCH_CHARS ? `${why.slice(0, MAX_MISMATCH_CHARS)}…` : why;
}
