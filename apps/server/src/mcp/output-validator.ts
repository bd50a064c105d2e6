import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { checkableSchema } from './mcp-tool';

/**
 * How the MCP client checks a tool's `structuredContent` against its `outputSchema`, in place of the SDK's default
 * (Ajv, which compiles the server's schema and runs its regular expressions): found from outside, `pattern: "^(a+)+$"`
 * and a result of 29 `a`s and a `!` held the server's thread for 49 s, doubling with each character. The schema goes
 * through the same checks as an input schema — no regular expression or format of the server's, `$ref`s bounded —
 * and is converted on a tool's first result rather than at each listing. A schema Airlock cannot check that way
 * passes any value: what the model is told is the result's content either way.
 */
export const outputValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let checked: { schema: ReturnType<typeof checkableSchema> } | undefined;
    return (input: unknown) => {
      checked ??= { schema: checkableSchema(schema) };
      const result = checked.schema?.safeParse(input);
      if (result === undefined || result.success) return { valid: true, data: input as T, errorMessage: undefined };
      return { valid: false, data: undefined, errorMessage: result.error.issues.map((issue) => `${issue.path.join('/') || '(root)'}: ${issue.message}`).join('; ') };
    };
  },
};
