/**
 * grafana/runbooks/index.html: RUNBOOKS.md as a page a browser opens at a section, for the
 * `runbooks` service of grafana/compose.yaml, which every panel and alert links to by default.
 *
 * The Markdown is shown as written (it reads as plain text), not rendered: headings become real
 * headings with GitHub's anchors, links to other sections become links, and everything else stays
 * in <pre> blocks. So no Markdown renderer is needed, and none can drop or mangle a step of a
 * runbook (docs/decisions/0045-runbook-links-as-absolute-urls.md).
 */
import { classifyLines, type Heading } from './runbook-anchors.ts';

const STYLE = [
  'body { max-width: 52rem; margin: 2rem auto; padding: 0 1rem; font-family: system-ui, sans-serif; }',
  'pre { white-space: pre-wrap; font-size: 0.95rem; line-height: 1.45; }',
  // The section a panel or alert linked to stands out; the page scrolls it just below the top.
  ':target { background: #fff3c4; scroll-margin-top: 1rem; }',
].join('\n');

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** `[text](#anchor)` becomes a link to that section. */
function linkSections(escaped: string): string {
  return escaped.replace(/\[([^\]\n]+)\]\((#[\w-]+)\)/g, '<a href="$2">$1</a>');
}

function headingHtml(heading: Heading): string {
  const tag = `h${heading.level}`;
  return `<${tag} id="${heading.anchor}">${escapeHtml(heading.text)}</${tag}>`;
}

function preHtml(lines: string[]): string[] {
  const text = lines.join('\n').replace(/^\n+|\n+$/g, '');
  return text === '' ? [] : [`<pre>${linkSections(escapeHtml(text))}</pre>`];
}

/** The page for `markdown` (RUNBOOKS.md), unformatted: the generator runs Prettier on it. */
export function renderRunbooksPage(markdown: string): string {
  const body: string[] = [];
  let pending: string[] = [];
  let title = 'Runbooks';
  for (const { line, heading } of classifyLines(markdown)) {
    if (heading === undefined) {
      pending.push(line);
      continue;
    }
    if (heading.level === 1) title = heading.text;
    body.push(...preHtml(pending), headingHtml(heading));
    pending = [];
  }
  body.push(...preHtml(pending));
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // No icon to fetch: the runbooks service serves this page alone, and anything else is a 404.
    '<link rel="icon" href="data:,">',
    `<title>${escapeHtml(title)}: payments gateway</title>`,
    `<style>\n${STYLE}\n</style>`,
    '</head>',
    '<body>',
    '<!-- Generated from grafana/RUNBOOKS.md by `npm run dashboards`: edit that file instead. -->',
    ...body,
    '</body>',
    '</html>',
  ].join('\n');
}
