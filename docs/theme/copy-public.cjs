// What the built site loads from the theme's public/ folder (MyST copies it into the site
// whole), taken from the packages: `thebe-core.min.js` and its chunks, which every page of the
// book theme loads (the library that would run a page's code against a kernel; the theme's
// own release puts it there), and KaTeX's stylesheet with its fonts, which the book theme
// would link from a CDN (app/root.tsx links this copy).
const fs = require('fs');
const path = require('path');

const thebe = path.dirname(require.resolve('thebe-core/dist/lib/thebe-core.min.js'));
for (const name of fs.readdirSync(thebe).filter((name) => name.endsWith('.js'))) {
  fs.copyFileSync(path.join(thebe, name), path.join('public', name));
}

const katex = path.dirname(require.resolve('katex/dist/katex.min.css'));
fs.mkdirSync(path.join('public', 'katex', 'fonts'), { recursive: true });
fs.copyFileSync(path.join(katex, 'katex.min.css'), path.join('public', 'katex', 'katex.min.css'));
for (const name of fs.readdirSync(path.join(katex, 'fonts')).filter((name) => name.endsWith('.woff2'))) {
  fs.copyFileSync(path.join(katex, 'fonts', name), path.join('public', 'katex', 'fonts', name));
}
