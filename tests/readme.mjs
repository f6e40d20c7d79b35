// Test helper: the README's code blocks, by section.

/** The ```LANG blocks under the README's "## " headings in `sections`: [{ section, code }] in order. */
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
    if (h) section = sections.includes(h[1].trim()) ? h[1].trim() : null;
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

/** The files the README's quick starts use: name in the user's project <- file of the repository. */
export const QUICKSTART_FILES = {
  'model.onnx': 'demo/models/digits/model.onnx',
  'train_x.bin': 'demo/models/digits/personal_train_x.bin',
  'train_y.bin': 'demo/models/digits/personal_train_y.bin',
};
