// Test helper: the code blocks of the README (and of the docs), by section, and the files the
// README's quick starts read.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The ```LANG blocks under the "## " headings in `sections` (every block when `sections` is
 * null): [{ section, code }] in order.
 */
export function readmeSnippets(readme, sections, lang = 'js') {
  const out = [];
  let section = null;
  let code = null;
  const fence = new RegExp(`^\`\`\`${lang}\\s*$`);
  for (const line of readme.split('\n')) {
    if (code !== null) {
      if (line.startsWith('```')) {
        out.push({ section, code: code.join('\n') });
        code = null;
      } else code.push(line);
      continue;
    }
    const h = /^## (.*)$/.exec(line);
    if (h) section = sections === null || sections.includes(h[1].trim()) ? h[1].trim() : null;
    else if (section && fence.test(line)) code = [];
  }
  return out;
}

/** The one ```js block under "## SECTION". */
export function readmeSnippet(readme, section) {
  const found = readmeSnippets(readme, [section]);
  if (found.length !== 1) throw new Error(`README.md: expected one \`\`\`js block under "## ${section}", found ${found.length}`);
  return found[0].code;
}

/** The text of "## SECTION" up to the next "## " heading. */
function sectionText(readme, section) {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${section}`);
  if (start < 0) throw new Error(`README.md has no "## ${section}" heading`);
  const end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/**
 * The files a quick start reads, as the README gives them: the names its code reads
 * (`readFile('...')`, `fetch('...')`, `generateArtifacts('...')`), found in the repository
 * folder its prose names (a `demo/...` path in backquotes). Throws when the code reads a file
 * that folder does not have, or one the prose does not name. [{ name, from }], `from` relative
 * to `root`.
 */
export function quickstartFiles(readme, section, root) {
  const text = sectionText(readme, section);
  const code = readmeSnippet(readme, section);
  const dirs = [...text.matchAll(/`(demo\/[^`\s]*\/)`/g)].map((m) => m[1]);
  if (dirs.length === 0) throw new Error(`README.md "## ${section}" names no demo/... folder for its files`);
  const names = [...new Set([...code.matchAll(/\b(?:readFile|fetch|generateArtifacts)\(\s*'([^']+)'/g)].map((m) => m[1]))];
  if (names.length === 0) throw new Error(`README.md "## ${section}": its code reads no file`);
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return names.map((name) => {
    const dir = dirs.find((d) => existsSync(join(root, d, name)));
    if (!dir) throw new Error(`README.md "## ${section}" reads '${name}', which is not in ${dirs.join(' or ')}: name a file that ships there`);
    if (!prose.includes(`\`${name}\``)) throw new Error(`README.md "## ${section}" reads '${name}' but does not tell the reader where it comes from`);
    return { name, from: join(dir, name) };
  });
}
