// Remix 1.x's esbuild cannot bundle a CSS file that @imports another, and the Jupyter
// widgets' stylesheet (which @myst-theme/jupyter pulls in) imports two. The theme's own
// repository patches these two lines out before it builds; so does this, in node_modules.
const fs = require('fs');

const stylesheet = require.resolve('@jupyter-widgets/controls/css/widgets-base.css');
const css = fs.readFileSync(stylesheet, 'utf8');
fs.writeFileSync(stylesheet, css.replace(/^@import '\.\/(lumino|nouislider)\.css';$/gm, '/* $1.css left out */'));
