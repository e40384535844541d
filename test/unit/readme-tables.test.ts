import { describe, expect, it } from 'vitest';
import {
  GENERATED_TABLES,
  generatedBlock,
  readReadme,
  tableCells,
} from '../../scripts/docs/readme-tables.ts';

describe("the README's generated tables", () => {
  it.each(Object.entries(GENERATED_TABLES))(
    '%s matches the code it is generated from (npm run docs:tables rewrites it)',
    (name, render) => {
      expect(tableCells(generatedBlock(readReadme(), name))).toEqual(tableCells(render()));
    },
  );
});
