// Pages of one template, for the template-token tests: a long shared section (60 words every page has),
// then 25 words of the page's own; pages 0-4 also have an edited copy (two of their words changed).
export const TEMPLATE_TEXT = Array.from({ length: 60 }, (_, i) => `common${i}`).join(' ');

const own = (page: number) => Array.from({ length: 25 }, (_, i) => `page${page}word${i}`).join(' ');

/** `pages` pages (ids `${prefix}${n}`) and edited copies of the first five (`${prefix}${n}-edit`). */
export function templatedPages(pages: number, prefix = 'p', from = 0): Array<{ id: string; text: string }> {
  const numbers = Array.from({ length: pages }, (_, i) => from + i);
  return [
    ...numbers.map((page) => ({ id: `${prefix}${page}`, text: `${TEMPLATE_TEXT} ${own(page)}` })),
    ...numbers.slice(0, 5).map((page) => ({
      id: `${prefix}${page}-edit`,
      text: `${TEMPLATE_TEXT} ${own(page).replace(`page${page}word3 `, `changed${page} `).replace(`page${page}word9 `, `edited${page} `)}`,
    })),
  ];
}
