/**
 * The headings of grafana/RUNBOOKS.md and their anchors, as GitHub makes them: the same `#…`
 * then works on the repository's page of the file and on grafana/runbooks/index.html, which
 * `npm run dashboards` writes with these ids. Lines inside fenced code blocks are not headings.
 */
export interface Heading {
  level: number;
  text: string;
  anchor: string;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;
const FENCE = /^\s*(```|~~~)/;

/** Each line of `markdown`, with the heading it is, if it is one outside a code block. */
export function classifyLines(markdown: string): Array<{ line: string; heading?: Heading }> {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (FENCE.test(line)) fenced = !fenced;
    const match = fenced ? null : HEADING.exec(line);
    if (match === null) return { line };
    const text = match[2] ?? '';
    return { line, heading: { level: match[1]?.length ?? 1, text, anchor: headingAnchor(text) } };
  });
}

export function headings(markdown: string): Heading[] {
  return classifyLines(markdown).flatMap(({ heading }) => (heading ? [heading] : []));
}
