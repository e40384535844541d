/**
 * Points the alert rules' `runbook_url` annotations (and the promtool tests that expect them)
 * at RUNBOOKS_URL, keeping each one's section. `npm run dashboards` runs it over the rule files,
 * so changing RUNBOOKS_URL moves the alerts' links with the panels'. Only those lines change:
 * the rules are written by hand, comments and layout included.
 */
import { runbookUrl } from './builders/runbooks.ts';

export class RunbookUrlWithoutSectionError extends Error {
  override readonly name = 'RunbookUrlWithoutSectionError';
}

const RUNBOOK_URL_LINE = /^(\s*runbook_url:[ \t]*)(.*?)[ \t]*$/gm;

/** The text of a rule or rule-test file with every `runbook_url` at RUNBOOKS_URL. */
export function withRunbookUrls(yaml: string): string {
  return yaml.replace(RUNBOOK_URL_LINE, (_line, key: string, value: string) => {
    const anchor = /#([\w-]+)['"]?$/.exec(value)?.[1];
    // A link with no section would open the top of the runbooks, not what to do: refuse it.
    if (anchor === undefined) {
      throw new RunbookUrlWithoutSectionError(`runbook_url without a #section: ${value}`);
    }
    return `${key}'${runbookUrl(anchor).replace(/'/g, "''")}'`;
  });
}
