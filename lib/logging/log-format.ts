/** How log lines are written: `json` for collectors, pipes and files; `pretty` for a person. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * LOG_FORMAT when set; else pretty when stdout is a terminal and JSON otherwise, so a developer
 * at `npm start` reads lines while a pipe, a file or a container's log driver keeps one JSON
 * object a line that a collector can parse.
 */
export function logFormatFor(
  configured: LogFormat | undefined,
  stdoutIsTTY: boolean | undefined,
): LogFormat {
  return configured ?? (stdoutIsTTY === true ? 'pretty' : 'json');
}
