/**
 * `npm run docs:tables`: the README's tables that have a source of truth in code, written from
 * it. Each table sits between `<!-- NAME:begin -->` and `<!-- NAME:end -->`; a test fails when
 * the README's copy differs from what this would write.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ERROR_CATALOG } from '../../app/error-catalog.ts';
import { configVariables } from '../../app/config-schema.ts';

const README = new URL('../../README.md', import.meta.url);

/** The error catalog as the README shows it: code, HTTP status, whether a key stores it. */
export function errorTable(): string {
  const rows = Object.entries(ERROR_CATALOG).map(
    ([code, entry]) =>
      `| \`${code}\` | ${entry.httpStatus} | ${entry.stored ? 'yes' : 'no'} | ${entry.message} |`,
  );
  return [
    '| code | HTTP | stored for the key | message |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** The configuration schema as the README shows it: variable, default, unit, meaning. */
export function configTable(): string {
  const rows = configVariables().map(
    (v) => `| \`${v.env}\` | ${v.shown} | ${v.unit ?? ''} | ${v.description} |`,
  );
  return ['| variable | default | unit | meaning |', '| --- | --- | --- | --- |', ...rows].join(
    '\n',
  );
}

const TABLES: Record<string, () => string> = { errors: errorTable, config: configTable };

/** A Markdown table's cells, trimmed, with separator rows as `---`: the formatter's padding aside. */
export function tableCells(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.trim().startsWith('|'))
    .map((line) =>
      line
        .trim()
        .slice(1, -1)
        .split('|')
        .map((cell) => (/^\s*:?-+:?\s*$/.test(cell) ? '---' : cell.trim())),
    );
}

/** The text between a generated table's markers in the README. */
export function generatedBlock(readme: string, name: string): string {
  const begin = `<!-- ${name}:begin -->`;
  const from = readme.indexOf(begin);
  const to = readme.indexOf(`<!-- ${name}:end -->`);
  if (from < 0 || to < from) throw new Error(`README.md has no ${name} block`);
  return readme.slice(from + begin.length, to);
}

export const GENERATED_TABLES = TABLES;

/** The README with every generated table replaced by what the code says now. */
export function renderReadme(text: string): string {
  let out = text;
  for (const [name, render] of Object.entries(TABLES)) {
    const begin = `<!-- ${name}:begin -->`;
    const end = `<!-- ${name}:end -->`;
    const from = out.indexOf(begin);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`README.md has no ${begin} … ${end} block`);
    out = `${out.slice(0, from + begin.length)}\n${render()}\n${out.slice(to)}`;
  }
  return out;
}

export function readReadme(): string {
  return readFileSync(README, 'utf8');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(README, renderReadme(readReadme()));
}
